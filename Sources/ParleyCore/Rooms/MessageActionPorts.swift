import Foundation

/// What the rules of message actions decide on: who sent a message, when, and whether it
/// is deleted.
public struct MessageFacts: Sendable, Equatable {
    public let id: Int64
    public let roomID: Int64
    public let seq: Int64
    public let senderID: Int64?
    public let createdAt: Date
    public let content: String
    public let fileID: Int64?
    public let mentions: [Int64]
    public let deleted: Bool

    public init(
        id: Int64, roomID: Int64, seq: Int64, senderID: Int64?, createdAt: Date, content: String, fileID: Int64?,
        mentions: [Int64], deleted: Bool
    ) {
        self.id = id
        self.roomID = roomID
        self.seq = seq
        self.senderID = senderID
        self.createdAt = createdAt
        self.content = content
        self.fileID = fileID
        self.mentions = mentions
        self.deleted = deleted
    }
}

/// What became of adding or removing a reaction.
public enum ReactionResult: Sendable, Equatable {
    /// Added or removed; `count` is the key's count after it.
    case changed(count: Int64)
    /// Already as asked (idempotent).
    case unchanged
    /// A new key on a message that already has ``MessageActionService/maximumReactionKeys``.
    case tooManyKeys
    case messageDeleted
    case noSuchMessage
}

/// Where `changedSince` stands: the change time (in microseconds since 1970, as PostgreSQL
/// keeps it: exact) and id of the last message a page returned.
public struct ChangeCursor: Sendable, Equatable {
    public let changedAtMicros: Int64
    public let messageID: Int64

    public init(changedAtMicros: Int64, messageID: Int64) {
        self.changedAtMicros = changedAtMicros
        self.messageID = messageID
    }
}

/// Edits, deletions, reactions, threads and changes of messages. Every change records its
/// event in the outbox in the same transaction, as sends do.
public protocol MessageActionRepository: Sendable {
    func facts(messageID: Int64, roomID: Int64) async throws -> MessageFacts?
    /// The message as `viewer` sees it (`me` in its reactions).
    func message(id: Int64, roomID: Int64, viewer: Int64) async throws -> Message?
    /// Replaces the content (and the mentions and metadata, when given; `.some(nil)` clears the
    /// metadata) and records `message-edited`; false, having changed nothing, when the message
    /// is deleted.
    func edit(messageID: Int64, roomID: Int64, content: String, mentions: [Int64]?, metadata: MessageMetadata??)
        async throws -> Bool
    /// Makes the room's messages tombstones in one transaction and records `message-deleted`
    /// for each, in `seq` order; passes over those that already are tombstones, and those of
    /// other rooms.
    func delete(messageIDs: [Int64], roomID: Int64, by userID: Int64) async throws
    /// Adds (`add`) or removes the user's reaction with `key` and records `reaction-changed`
    /// when it changed anything.
    func setReaction(
        messageID: Int64, roomID: Int64, key: String, userID: Int64, add: Bool, maximumKeys: Int
    ) async throws -> ReactionResult
    /// Users who reacted with `key`, by id after `after`.
    func reactors(messageID: Int64, key: String, after: Int64?, limit: Int) async throws -> [User]
    /// Replies to a message, ascending by `seq` after `after`; one more than `limit` tells
    /// that there are more.
    func replies(roomID: Int64, messageID: Int64, after: Int64?, limit: Int, viewer: Int64) async throws -> [Message]
    /// Messages edited, deleted or reacted to at or after `since`, in the order they last
    /// changed, after `cursor`; each with where it stands in that order.
    func changes(roomID: Int64, since: Date, after cursor: ChangeCursor?, limit: Int, viewer: Int64) async throws
        -> [(message: Message, cursor: ChangeCursor)]
}

extension MessageActionRepository {
    /// Makes the message a tombstone and records `message-deleted`; nothing when it already is one.
    public func delete(messageID: Int64, roomID: Int64, by userID: Int64) async throws {
        try await delete(messageIDs: [messageID], roomID: roomID, by: userID)
    }
}
