import Foundation

/// A chat room as one user sees it (`rest-api.md`, Room).
public struct RoomView: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case twoparty, multiparty }

    public let id: Int64
    public let uid: String
    public let type: Kind
    public var name: String?
    /// Set by the room's admins; nil when unset.
    public var description: String?
    /// Read-only: readable and listed, but nothing is sent, edited or reacted to.
    public var archived: Bool
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
    /// The room's picture, set by an admin; nil without one.
    public var avatar: FileObject?
    /// The newest messages, ascending, when asked for.
    public var latestMessages: [Message]?

    public init(
        id: Int64, uid: String, type: Kind, name: String?, description: String? = nil, archived: Bool = false,
        createdAt: Date, lastMessageAt: Date?, myRole: RoomRole,
        lastSeq: Int64, lastReadMessageId: Int64?, lastReadSeq: Int64? = nil, unreadCount: Int64,
        unreadMentionCount: Int64 = 0, peer: User? = nil, avatar: FileObject? = nil, latestMessages: [Message]? = nil
    ) {
        self.id = id
        self.uid = uid
        self.type = type
        self.name = name
        self.description = description
        self.archived = archived
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.myRole = myRole
        self.lastSeq = lastSeq
        self.lastReadMessageId = lastReadMessageId
        self.lastReadSeq = lastReadSeq
        self.unreadCount = unreadCount
        self.unreadMentionCount = unreadMentionCount
        self.peer = peer
        self.avatar = avatar
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

/// A room as a report or a search result names it: `{id, uid, name, type}`, every key
/// present (`name` null for a two-party room).
public struct RoomSummary: Sendable, Equatable, Codable {
    public let id: Int64
    public let uid: String
    @NullEncoded public var name: String?
    public let type: RoomView.Kind

    public init(id: Int64, uid: String, name: String?, type: RoomView.Kind) {
        self.id = id
        self.uid = uid
        self.name = name
        self.type = type
    }
}
