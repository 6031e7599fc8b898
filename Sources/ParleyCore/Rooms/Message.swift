import Foundation

/// A stored message (`rest-api.md`, Message; the data of `new-message-notification`).
///
/// A deleted message stays as a tombstone with its `seq`: empty content, no file,
/// `deletedAt` and `deletedById` set (see <doc:MessageActions>).
public struct Message: Sendable, Equatable, Codable {
    public let id: Int64
    public let seq: Int64
    public let chatRoomId: Int64
    public let chatRoomUid: String
    @NullEncoded public var sentById: Int64?
    public let content: String
    public let uid: String
    public let type: MessageType
    @NullEncoded public var metadata: MessageMetadata?
    public let fileId: Int64?
    public let createdAt: Date
    /// The first attachment, for clients before attachments.
    public let file: FileObject?
    /// Each attached file's object (with its signed URL), in the order sent.
    public let attachments: [FileObject]
    @NullEncoded public var editedAt: Date?
    @NullEncoded public var deletedAt: Date?
    @NullEncoded public var deletedById: Int64?
    /// The message this one answers, as it stands now.
    @NullEncoded public var replyTo: ReplyPreview?
    /// Replies to this message that are not deleted.
    public let replyCount: Int64
    /// Users the sender named.
    public let mentions: [Int64]
    /// Reactions in the order their keys were first used; `me` only where a caller is known.
    public var reactions: [ReactionSummary]
    /// How many other members received and read it; nil in a room above the receipts' member
    /// limit (``MessageReceipts``).
    @NullEncoded public var receipts: MessageReceipts?

    public init(
        id: Int64, seq: Int64, chatRoomId: Int64, chatRoomUid: String, sentById: Int64?, content: String, uid: String,
        fileId: Int64?, createdAt: Date, file: FileObject? = nil, editedAt: Date? = nil, deletedAt: Date? = nil,
        deletedById: Int64? = nil, replyTo: ReplyPreview? = nil, replyCount: Int64 = 0, mentions: [Int64] = [],
        reactions: [ReactionSummary] = [], type: MessageType = .text, metadata: MessageMetadata? = nil,
        attachments: [FileObject]? = nil, receipts: MessageReceipts? = nil
    ) {
        self.id = id
        self.seq = seq
        self.chatRoomId = chatRoomId
        self.chatRoomUid = chatRoomUid
        self.sentById = sentById
        self.content = content
        self.uid = uid
        self.type = type
        self.metadata = metadata
        self.fileId = fileId
        self.createdAt = createdAt
        self.file = file
        self.attachments = attachments ?? (file.map { [$0] } ?? [])
        self.editedAt = editedAt
        self.deletedAt = deletedAt
        self.deletedById = deletedById
        self.replyTo = replyTo
        self.replyCount = replyCount
        self.mentions = mentions
        self.reactions = reactions
        self.receipts = receipts
    }

    /// A client's reading of the contract's Message: `fileId` comes from `file`. Written with
    /// every key of the contract (null or empty when there is none) except `file`, which only a
    /// message with a file has, and `fileId`, which `file` carries.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let file = try container.decodeIfPresent(FileObject.self, forKey: .file)
        self.init(
            id: try container.decode(Int64.self, forKey: .id), seq: try container.decode(Int64.self, forKey: .seq),
            chatRoomId: try container.decode(Int64.self, forKey: .chatRoomId),
            chatRoomUid: try container.decode(String.self, forKey: .chatRoomUid),
            sentById: try container.decodeIfPresent(Int64.self, forKey: .sentById),
            content: try container.decode(String.self, forKey: .content),
            uid: try container.decode(String.self, forKey: .uid), fileId: file?.id,
            createdAt: try container.decode(Date.self, forKey: .createdAt), file: file,
            editedAt: try container.decodeIfPresent(Date.self, forKey: .editedAt),
            deletedAt: try container.decodeIfPresent(Date.self, forKey: .deletedAt),
            deletedById: try container.decodeIfPresent(Int64.self, forKey: .deletedById),
            replyTo: try container.decodeIfPresent(ReplyPreview.self, forKey: .replyTo),
            replyCount: try container.decodeIfPresent(Int64.self, forKey: .replyCount) ?? 0,
            mentions: try container.decodeIfPresent([Int64].self, forKey: .mentions) ?? [],
            reactions: try container.decodeIfPresent([ReactionSummary].self, forKey: .reactions) ?? [],
            type: try container.decodeIfPresent(MessageType.self, forKey: .type) ?? .text,
            metadata: try container.decodeIfPresent(MessageMetadata.self, forKey: .metadata),
            attachments: try container.decodeIfPresent([FileObject].self, forKey: .attachments),
            receipts: try container.decodeIfPresent(MessageReceipts.self, forKey: .receipts))
    }

    enum CodingKeys: String, CodingKey {
        case id, seq, chatRoomId, chatRoomUid, sentById, content, uid, type, metadata, file, attachments, createdAt
        case editedAt, deletedAt, deletedById, replyTo, replyCount, mentions, reactions, receipts
    }
}

/// The message a reply answers: `excerpt` is the first 100 characters (code points) of its
/// content, empty once it is deleted.
public struct ReplyPreview: Sendable, Equatable, Codable {
    public let id: Int64
    public let seq: Int64
    @NullEncoded public var sentById: Int64?
    public let excerpt: String
    public let deleted: Bool

    public init(id: Int64, seq: Int64, sentById: Int64?, excerpt: String, deleted: Bool) {
        self.id = id
        self.seq = seq
        self.sentById = sentById
        self.excerpt = deleted ? "" : excerpt
        self.deleted = deleted
    }

    enum CodingKeys: String, CodingKey { case id, seq, sentById, excerpt, deleted }
}

/// How many reacted to a message with one key, and (for a known caller) whether they did.
public struct ReactionSummary: Sendable, Equatable, Codable {
    public let key: String
    public let count: Int64
    /// Absent on MQTT, where one event goes to every reader.
    public var me: Bool?

    public init(key: String, count: Int64, me: Bool? = nil) {
        self.key = key
        self.count = count
        self.me = me
    }
}
