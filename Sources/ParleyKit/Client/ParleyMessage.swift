import Foundation

/// A message as an app shows it: from the REST history or a room event, which carry the same
/// contract's `Message` (a room event's reactions without `me`, which is the caller's own).
public struct ParleyMessage: Sendable, Hashable, Identifiable, Decodable {
    public var id: Int
    /// The room's order: strictly increasing by 1 in commit order.
    public var seq: Int
    public var roomID: Int
    public var roomUID: String
    /// Nil for a system message, and once the sender's account is erased.
    public var senderID: Int?
    public var content: String
    /// The sender's id for the message, the same on every retry.
    public var uid: String
    /// `text`, `system`, or the app's own `x-…` type.
    public var type: String
    public var createdAt: Date
    public var editedAt: Date?
    /// Set on a tombstone (content "", nothing attached).
    public var deletedAt: Date?
    public var replyToID: Int?
    public var mentions: [Int]
    public var reactions: [ParleyReaction]
    /// The ids of the files attached, in the order sent.
    public var attachmentIDs: [Int]

    public var isDeleted: Bool { deletedAt != nil }

    private enum CodingKeys: String, CodingKey {
        case id, seq, chatRoomId, chatRoomUid, sentById, content, uid, type, createdAt, editedAt, deletedAt
        case replyTo, mentions, reactions, attachments
    }

    private struct Reference: Decodable { let id: Int }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        seq = try container.decode(Int.self, forKey: .seq)
        roomID = try container.decode(Int.self, forKey: .chatRoomId)
        roomUID = try container.decode(String.self, forKey: .chatRoomUid)
        senderID = try container.decodeIfPresent(Int.self, forKey: .sentById)
        content = try container.decode(String.self, forKey: .content)
        uid = try container.decode(String.self, forKey: .uid)
        type = try container.decodeIfPresent(String.self, forKey: .type) ?? "text"
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        editedAt = try container.decodeIfPresent(Date.self, forKey: .editedAt)
        deletedAt = try container.decodeIfPresent(Date.self, forKey: .deletedAt)
        replyToID = try container.decodeIfPresent(Reference.self, forKey: .replyTo)?.id
        mentions = try container.decodeIfPresent([Int].self, forKey: .mentions) ?? []
        reactions = try container.decodeIfPresent([ParleyReaction].self, forKey: .reactions) ?? []
        attachmentIDs = try container.decodeIfPresent([Reference].self, forKey: .attachments)?.map(\.id) ?? []
    }

    /// The REST client's message.
    public init(_ message: Components.Schemas.Message) {
        id = message.id
        seq = message.seq
        roomID = message.chatRoomId
        roomUID = message.chatRoomUid
        senderID = message.sentById
        content = message.content
        uid = message.uid
        type = message._type
        createdAt = message.createdAt
        editedAt = message.editedAt
        deletedAt = message.deletedAt
        replyToID = message.replyTo?.id
        mentions = message.mentions
        reactions = message.reactions.map { ParleyReaction(key: $0.key, count: $0.count) }
        attachmentIDs = message.attachments.map(\.id)
    }
}

/// One reaction key on a message and how many reacted with it.
public struct ParleyReaction: Sendable, Hashable, Decodable {
    public var key: String
    public var count: Int

    public init(key: String, count: Int) {
        self.key = key
        self.count = count
    }
}
