import Foundation
import ParleyRuntime

/// Delivery receipts: a member says how far their devices received a room (REST or
/// `chat-in`), and members list how far each of them received and read it.
public struct ReceiptService: Sendable {
    let rooms: RoomService
    let receipts: any ReceiptRepository
    let marks: any DeliveredMarks

    public init(rooms: RoomService, receipts: any ReceiptRepository, marks: any DeliveredMarks) {
        self.rooms = rooms
        self.receipts = receipts
        self.marks = marks
    }

    /// Coalesced: at most one write per member and room a second, the highest `seq` kept
    /// (``Coalescer``). A non-member gets `not-found`.
    public func delivered(roomID: Int64, seq: Int64, by userID: Int64) async throws {
        guard seq >= 0 else { throw ParleyError.invalidRequest("seq must be 0 or more", field: "seq") }
        try await rooms.require(.reader, roomID: roomID, userID: userID)
        marks.delivered(RoomUser(roomID: roomID, userID: userID), upTo: seq)
    }

    public func receipts(roomID: Int64, for userID: Int64, afterUserID: Int64?, limit: Int) async throws
        -> [Receipt]
    {
        try await rooms.require(.reader, roomID: roomID, userID: userID)
        return try await receipts.receipts(roomID: roomID, viewer: userID, afterUserID: afterUserID, limit: limit)
    }

    /// The coalescer's writer: what it passes, stored.
    public static func write(to receipts: any ReceiptRepository) -> Coalescer<RoomUser>.Write {
        { due in try await receipts.recordDelivered(due.map { (member: $0.key, seq: $0.value) }) }
    }
}
