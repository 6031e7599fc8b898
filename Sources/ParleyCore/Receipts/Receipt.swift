import Foundation

/// How far a member has received and read a room (`GET /v1/rooms/{id}/receipts`): `seq`s,
/// 0 for nothing yet. Reading implies receiving: `deliveredSeq` is never below `readSeq`.
/// `readSeq` is null for a member who shares no read state (``Privacy/ReadReceipts/nobody``),
/// except to themselves.
public struct Receipt: Sendable, Equatable, Codable {
    public let userId: Int64
    @NullEncoded public var readSeq: Int64?
    public let deliveredSeq: Int64
    /// When either moved last; null before either did.
    @NullEncoded public var updatedAt: Date?

    public init(userId: Int64, readSeq: Int64?, deliveredSeq: Int64, updatedAt: Date?) {
        self.userId = userId
        self.readSeq = readSeq
        self.deliveredSeq = deliveredSeq
        self.updatedAt = updatedAt
    }
}

extension RoomEvent {
    /// `receipt-changed` on the room's topic: a member's devices received more of the room
    /// (`readSeq` null when they share no read state).
    public struct ReceiptChanged: Codable, Sendable, Equatable {
        public let chatRoomId: Int64
        public let userId: Int64
        @NullEncoded public var readSeq: Int64?
        public let deliveredSeq: Int64

        public init(chatRoomId: Int64, userId: Int64, readSeq: Int64?, deliveredSeq: Int64) {
            self.chatRoomId = chatRoomId
            self.userId = userId
            self.readSeq = readSeq
            self.deliveredSeq = deliveredSeq
        }
    }

    /// `notification-cleared` on the reader's own notification topic: every device of theirs
    /// may withdraw what it shows of the room up to `readSeq`.
    public struct NotificationCleared: Codable, Sendable, Equatable {
        public let chatRoomId: Int64
        public let readSeq: Int64

        public init(chatRoomId: Int64, readSeq: Int64) {
            self.chatRoomId = chatRoomId
            self.readSeq = readSeq
        }
    }

    public static func notificationCleared(_ cleared: NotificationCleared) -> Envelope<NotificationCleared> {
        Envelope(
            type: "notification-cleared", data: cleared, identity: "\(cleared.chatRoomId):\(cleared.readSeq)")
    }

    public static func receiptChanged(_ changed: ReceiptChanged) -> Envelope<ReceiptChanged> {
        Envelope(
            type: "receipt-changed", data: changed,
            identity: "\(changed.chatRoomId):\(changed.userId):\(changed.deliveredSeq)")
    }
}
