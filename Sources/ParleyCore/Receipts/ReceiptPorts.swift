import Foundation
import ParleyRuntime

/// Delivery receipts as they are stored: each member's `seq` per room, moved forward only.
public protocol ReceiptRepository: Sendable {
    /// Moves each member's delivered `seq` forward (capped at the room's last message), in one
    /// transaction, recording `receipt-changed` for each that moved beyond what the member read.
    /// A member no longer in the room is skipped.
    func recordDelivered(_ marks: [(member: RoomUser, seq: Int64)]) async throws
    /// Every member of the room, by user id after `afterUserID`, with how far they received and
    /// read it, as `viewerID` sees it (their own read state always, others' as they share it).
    func receipts(roomID: Int64, viewer viewerID: Int64, afterUserID: Int64?, limit: Int) async throws -> [Receipt]
}

/// Where a client's "received up to" goes first: coalesced per member and room before it is
/// stored (``ReceiptRepository/recordDelivered(_:)``).
public protocol DeliveredMarks: Sendable {
    func delivered(_ member: RoomUser, upTo seq: Int64)
}

extension Coalescer: DeliveredMarks where Key == RoomUser {
    public func delivered(_ member: RoomUser, upTo seq: Int64) { submit(member, seq) }
}
