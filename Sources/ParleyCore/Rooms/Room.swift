import Foundation

/// A chat room as one user sees it (`rest-api.md`, Room).
public struct RoomView: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case twoparty, multiparty }

    public let id: Int64
    public let uid: String
    public let type: Kind
    public var name: String?
    public let createdAt: Date
    public var lastMessageAt: Date?
    public var myRole: RoomRole
    public var lastSeq: Int64
    public var lastReadMessageId: Int64?
    /// The `seq` of `lastReadMessageId`: what history pages by.
    public var lastReadSeq: Int64?
    public var unreadCount: Int64
    /// Unread messages (not deleted) that mention the user.
    public var unreadMentionCount: Int64
    /// The other user of a two-party room.
    public var peer: User?
    /// The newest messages, ascending, when asked for.
    public var latestMessages: [Message]?

    public init(
        id: Int64, uid: String, type: Kind, name: String?, createdAt: Date, lastMessageAt: Date?, myRole: RoomRole,
        lastSeq: Int64, lastReadMessageId: Int64?, lastReadSeq: Int64? = nil, unreadCount: Int64,
        unreadMentionCount: Int64 = 0, peer: User? = nil, latestMessages: [Message]? = nil
    ) {
        self.id = id
        self.uid = uid
        self.type = type
        self.name = name
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.myRole = myRole
        self.lastSeq = lastSeq
        self.lastReadMessageId = lastReadMessageId
        self.lastReadSeq = lastReadSeq
        self.unreadCount = unreadCount
        self.unreadMentionCount = unreadMentionCount
        self.peer = peer
        self.latestMessages = latestMessages
    }

    public var topic: String { Topic.room(uid) }
}

/// A member of a room with the paths that make them one (`direct`, `group:<id>`, `app-role:<id>`).
public struct Member: Sendable, Equatable {
    public let user: User
    public let role: RoomRole
    public let via: [String]

    public init(user: User, role: RoomRole, via: [String]) {
        self.user = user
        self.role = role
        self.via = via
    }
}

/// A stored message (`rest-api.md`, Message; the data of `new-message-notification`).
///
/// A deleted message stays as a tombstone with its `seq`: empty content, no file,
/// `deletedAt` and `deletedById` set (see <doc:MessageActions>).
public struct Message: Sendable, Equatable, Codable {
    public let id: Int64
    public let seq: Int64
    public let chatRoomId: Int64
    public let chatRoomUid: String
    public let sentById: Int64?
    public var content: String
    public let uid: String
    public var fileId: Int64?
    public let createdAt: Date
    /// The attached file's object (with its signed URL), when there is one.
    public var file: FileObject?
    public var editedAt: Date?
    public var deletedAt: Date?
    public var deletedById: Int64?
    /// The message this one answers, as it stands now.
    public var replyTo: ReplyPreview?
    /// Replies to this message that are not deleted.
    public var replyCount: Int64
    /// Users the sender named.
    public var mentions: [Int64]
    /// Reactions in the order their keys were first used; `me` only where a caller is known.
    public var reactions: [ReactionSummary]

    public init(
        id: Int64, seq: Int64, chatRoomId: Int64, chatRoomUid: String, sentById: Int64?, content: String, uid: String,
        fileId: Int64?, createdAt: Date, file: FileObject? = nil, editedAt: Date? = nil, deletedAt: Date? = nil,
        deletedById: Int64? = nil, replyTo: ReplyPreview? = nil, replyCount: Int64 = 0, mentions: [Int64] = [],
        reactions: [ReactionSummary] = []
    ) {
        self.id = id
        self.seq = seq
        self.chatRoomId = chatRoomId
        self.chatRoomUid = chatRoomUid
        self.sentById = sentById
        self.content = content
        self.uid = uid
        self.fileId = fileId
        self.createdAt = createdAt
        self.file = file
        self.editedAt = editedAt
        self.deletedAt = deletedAt
        self.deletedById = deletedById
        self.replyTo = replyTo
        self.replyCount = replyCount
        self.mentions = mentions
        self.reactions = reactions
    }

    /// The contract's keys, every one present (null when empty) except `file`, which only a
    /// message with a file has.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(seq, forKey: .seq)
        try container.encode(chatRoomId, forKey: .chatRoomId)
        try container.encode(chatRoomUid, forKey: .chatRoomUid)
        try container.encode(sentById, forKey: .sentById)
        try container.encode(content, forKey: .content)
        try container.encode(uid, forKey: .uid)
        if let file { try container.encode(file, forKey: .file) }
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(editedAt, forKey: .editedAt)
        try container.encode(deletedAt, forKey: .deletedAt)
        try container.encode(deletedById, forKey: .deletedById)
        try container.encode(replyTo, forKey: .replyTo)
        try container.encode(replyCount, forKey: .replyCount)
        try container.encode(mentions, forKey: .mentions)
        try container.encode(reactions, forKey: .reactions)
    }

    /// A client's reading of the contract's Message: `fileId` comes from `file`.
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
            reactions: try container.decodeIfPresent([ReactionSummary].self, forKey: .reactions) ?? [])
    }

    enum CodingKeys: String, CodingKey {
        case id, seq, chatRoomId, chatRoomUid, sentById, content, uid, file, createdAt
        case editedAt, deletedAt, deletedById, replyTo, replyCount, mentions, reactions
    }
}

/// The message a reply answers: `excerpt` is the first 100 characters (code points) of its
/// content, empty once it is deleted.
public struct ReplyPreview: Sendable, Equatable, Codable {
    public let id: Int64
    public let seq: Int64
    public let sentById: Int64?
    public let excerpt: String
    public let deleted: Bool

    public init(id: Int64, seq: Int64, sentById: Int64?, excerpt: String, deleted: Bool) {
        self.id = id
        self.seq = seq
        self.sentById = sentById
        self.excerpt = deleted ? "" : excerpt
        self.deleted = deleted
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(seq, forKey: .seq)
        try container.encode(sentById, forKey: .sentById)
        try container.encode(excerpt, forKey: .excerpt)
        try container.encode(deleted, forKey: .deleted)
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

/// A message as a client submits it.
public struct NewMessage: Sendable, Equatable {
    public let content: String
    public let uid: String
    public let fileId: Int64?
    /// The message of the same room this one answers.
    public let replyToId: Int64?
    /// Distinct users named, in the order given.
    public let mentions: [Int64]

    /// Checks the limits of the contract: content up to 20,000 characters, uid 1 to 64, at
    /// most 50 distinct mentions. Whether the reply's target and the mentioned users fit the
    /// room is checked where the message is stored.
    public init(
        content: String, uid: String, fileId: Int64?, replyToId: Int64? = nil, mentions: [Int64]? = nil,
        fieldPrefix: String = ""
    ) throws {
        try MessageText.check(content, hasFile: fileId != nil, field: fieldPrefix + "content")
        guard (1...64).contains(uid.unicodeScalars.count),
            uid.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParleyError.invalidRequest("uid must be 1 to 64 printable characters", field: fieldPrefix + "uid")
        }
        self.content = content
        self.uid = uid
        self.fileId = fileId
        self.replyToId = replyToId
        self.mentions = try MessageText.mentions(mentions ?? [], field: fieldPrefix + "mentions")
    }

    /// A plain message: no file, no reply, no mention (what the one-statement store takes).
    public var isPlain: Bool { fileId == nil && replyToId == nil && mentions.isEmpty }
}

/// The rules for what a message says, shared by sends and edits.
public enum MessageText {
    /// Content of up to 20,000 characters; empty only beside a file.
    public static func check(_ content: String, hasFile: Bool, field: String) throws {
        _ = try TextRule.validated(content, field: field, length: 0...20_000)
        guard !content.isEmpty || hasFile else {
            throw ParleyError.invalidRequest("a message needs content or a file", field: field)
        }
    }

    /// The distinct ids, first occurrence first; at most 50.
    public static func mentions(_ ids: [Int64], field: String) throws -> [Int64] {
        var seen = Set<Int64>()
        let distinct = ids.filter { seen.insert($0).inserted }
        guard distinct.count <= 50 else {
            throw ParleyError.invalidRequest("at most 50 distinct users may be mentioned", field: field)
        }
        return distinct
    }
}

/// Which page of history: `before`/`after` are seq cursors, `since`/`until` times.
public struct HistoryQuery: Sendable, Equatable {
    public var before: Int64?
    public var after: Int64?
    public var since: Date?
    public var until: Date?
    public var limit: Int

    public init(before: Int64? = nil, after: Int64? = nil, since: Date? = nil, until: Date? = nil, limit: Int = 50) {
        self.before = before
        self.after = after
        self.since = since
        self.until = until
        self.limit = limit
    }
}
