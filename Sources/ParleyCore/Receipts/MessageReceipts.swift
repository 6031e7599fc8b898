import Foundation

/// A message's `receipts`: how many members other than its sender received it and read it.
/// Kept in rooms of up to `PARLEY_RECEIPTS_MAX_MEMBERS` members; `null` above, where counting
/// them for every message would cost more than a count is worth.
public struct MessageReceipts: Codable, Sendable, Equatable {
    public let delivered: Int64
    public let read: Int64

    public init(delivered: Int64, read: Int64) {
        self.delivered = delivered
        self.read = read
    }

    /// A message just stored: nobody else has it yet.
    public static let none = MessageReceipts(delivered: 0, read: 0)
    /// `PARLEY_RECEIPTS_MAX_MEMBERS`'s default.
    public static let defaultMaxMembers = 100
    /// The setting's range: a room's members are read with each page of its history.
    public static let maxMembersRange = 0...1_000
}

/// How far each member of a room received and read it, from which a message's receipts are
/// counted.
public struct RoomMarks: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public let userID: Int64
        /// Never below `read` (reading implies receiving).
        public let delivered: Int64
        /// Nil when the member shares no read state (``Privacy/ReadReceipts/nobody``).
        public let read: Int64?

        public init(userID: Int64, delivered: Int64, read: Int64?) {
            self.userID = userID
            self.delivered = max(delivered, read ?? 0)
            self.read = read
        }
    }

    public let members: [Member]

    public init(members: [Member]) { self.members = members }

    /// The members other than its sender who received `message` and who read it.
    public func receipts(of message: Message) -> MessageReceipts {
        var (delivered, read): (Int64, Int64) = (0, 0)
        for member in members where member.userID != message.sentById {
            if member.delivered >= message.seq { delivered += 1 }
            if let seen = member.read, seen >= message.seq { read += 1 }
        }
        return MessageReceipts(delivered: delivered, read: read)
    }
}
