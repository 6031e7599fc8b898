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
    /// The other user of a two-party room.
    public var peer: User?
    /// The newest messages, ascending, when asked for.
    public var latestMessages: [Message]?

    public init(
        id: Int64, uid: String, type: Kind, name: String?, createdAt: Date, lastMessageAt: Date?, myRole: RoomRole,
        lastSeq: Int64, lastReadMessageId: Int64?, lastReadSeq: Int64? = nil, unreadCount: Int64, peer: User? = nil,
        latestMessages: [Message]? = nil
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
public struct Message: Sendable, Equatable, Codable {
    public let id: Int64
    public let seq: Int64
    public let chatRoomId: Int64
    public let chatRoomUid: String
    public let sentById: Int64?
    public let content: String
    public let uid: String
    public let fileId: Int64?
    public let createdAt: Date
    /// The attached file's object (with its signed URL), when there is one.
    public let file: FileObject?

    public init(
        id: Int64, seq: Int64, chatRoomId: Int64, chatRoomUid: String, sentById: Int64?, content: String, uid: String,
        fileId: Int64?, createdAt: Date, file: FileObject? = nil
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
    }

    /// The contract's keys; `file` only when a file is attached.
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
            createdAt: try container.decode(Date.self, forKey: .createdAt), file: file)
    }

    enum CodingKeys: String, CodingKey {
        case id, seq, chatRoomId, chatRoomUid, sentById, content, uid, file, createdAt
    }
}

/// A message as a client submits it.
public struct NewMessage: Sendable, Equatable {
    public let content: String
    public let uid: String
    public let fileId: Int64?

    /// Checks the limits of the contract: content up to 20,000 characters, uid 1 to 64.
    public init(content: String, uid: String, fileId: Int64?, fieldPrefix: String = "") throws {
        _ = try TextRule.validated(content, field: fieldPrefix + "content", length: 0...20_000)
        guard (1...64).contains(uid.unicodeScalars.count),
            uid.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParleyError.invalidRequest("uid must be 1 to 64 printable characters", field: fieldPrefix + "uid")
        }
        guard !content.isEmpty || fileId != nil else {
            throw ParleyError.invalidRequest("a message needs content or a file", field: fieldPrefix + "content")
        }
        self.content = content
        self.uid = uid
        self.fileId = fileId
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
