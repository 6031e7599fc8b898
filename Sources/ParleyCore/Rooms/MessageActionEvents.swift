import Foundation

/// The events of message actions on `chat-room/{uid}` (`asyncapi.yaml`), recorded in the
/// outbox with the change.
extension RoomEvent {
    public struct Edited: Codable, Sendable {
        /// The whole canonical message after the edit.
        public let message: Message
    }

    public static func edited(_ message: Message) -> Envelope<Edited> {
        Envelope(
            type: "message-edited", data: Edited(message: message),
            identity: "\(message.id):\(message.editedAt?.timeIntervalSince1970 ?? 0)")
    }

    public struct Deleted: Codable, Sendable, Equatable {
        public let id: Int64
        public let seq: Int64
        public let chatRoomId: Int64
        public let deletedAt: Date
        @NullEncoded public var deletedById: Int64?

        public init(id: Int64, seq: Int64, chatRoomId: Int64, deletedAt: Date, deletedById: Int64?) {
            self.id = id
            self.seq = seq
            self.chatRoomId = chatRoomId
            self.deletedAt = deletedAt
            self.deletedById = deletedById
        }
    }

    public static func deleted(_ deleted: Deleted) -> Envelope<Deleted> {
        Envelope(type: "message-deleted", data: deleted, identity: "\(deleted.id)")
    }

    public struct ReactionChanged: Codable, Sendable, Equatable {
        public let messageId: Int64
        public let chatRoomId: Int64
        public let key: String
        public let userId: Int64
        public let added: Bool
        /// The key's count after the change.
        public let count: Int64

        public init(messageId: Int64, chatRoomId: Int64, key: String, userId: Int64, added: Bool, count: Int64) {
            self.messageId = messageId
            self.chatRoomId = chatRoomId
            self.key = key
            self.userId = userId
            self.added = added
            self.count = count
        }
    }

    /// - Parameter at: when it changed, which tells one toggle from the next.
    public static func reactionChanged(_ change: ReactionChanged, at: Date) -> Envelope<ReactionChanged> {
        Envelope(
            type: "reaction-changed", data: change,
            identity: "\(change.messageId):\(change.userId):\(change.key):\(change.added):\(at.timeIntervalSince1970)")
    }
}
