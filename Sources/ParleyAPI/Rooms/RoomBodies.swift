import Foundation
import ParleyCore

/// The JSON shapes of `rest-api.md` for rooms and messages.

struct RoomResponse: Encodable, Sendable {
    let room: RoomView

    init(_ room: RoomView) { self.room = room }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(room.id, forKey: .id)
        try container.encode(room.uid, forKey: .uid)
        try container.encode(room.topic, forKey: .topic)
        try container.encode(room.type, forKey: .type)
        try container.encode(room.name, forKey: .name)
        try container.encode(room.createdAt, forKey: .createdAt)
        try container.encode(room.lastMessageAt, forKey: .lastMessageAt)
        try container.encode(room.myRole, forKey: .myRole)
        try container.encode(room.lastSeq, forKey: .lastSeq)
        try container.encode(room.lastReadMessageId, forKey: .lastReadMessageId)
        try container.encode(room.lastReadSeq, forKey: .lastReadSeq)
        try container.encode(room.unreadCount, forKey: .unreadCount)
        if let peer = room.peer { try container.encode(UserResponse(peer), forKey: .peer) }
        if let messages = room.latestMessages { try container.encode(messages, forKey: .latestMessages) }
    }

    enum CodingKeys: String, CodingKey {
        case id, uid, topic, type, name, createdAt, lastMessageAt, myRole, lastSeq, lastReadMessageId, lastReadSeq
        case unreadCount
        case peer, latestMessages
    }
}

struct RoomsResponse: Encodable, Sendable {
    let rooms: [RoomResponse]
    let nextCursor: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rooms, forKey: .rooms)
        try container.encode(nextCursor, forKey: .nextCursor)
    }

    enum CodingKeys: String, CodingKey { case rooms, nextCursor }
}

struct CreateRoomRequest: Decodable {
    struct MemberBody: Decodable {
        let userId: Int64
        let role: RoomRole
    }
    let name: String
    let members: [MemberBody]
    let firstMessage: MessageBody
}

struct MessageBody: Decodable {
    let content: String
    let uid: String
    let fileId: Int64?

    func newMessage(fieldPrefix: String = "") throws -> NewMessage {
        try NewMessage(content: content, uid: uid, fileId: fileId, fieldPrefix: fieldPrefix)
    }
}

struct RenameRequest: Decodable {
    let name: String
}

struct RoleRequestBody: Decodable {
    let role: RoomRole
}

/// A read marker's target: a message id or a `seq`, exactly one.
struct ReadRequest: Decodable {
    let messageId: Int64?
    let seq: Int64?
}

struct MemberResponse: Encodable, Sendable {
    let user: UserResponse
    let role: RoomRole
    let via: [String]

    init(_ member: Member) {
        user = UserResponse(member.user)
        role = member.role
        via = member.via
    }
}

struct MessagesResponse: Encodable, Sendable {
    let messages: [Message]
    let hasMore: Bool
    let nextCursor: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        try container.encode(hasMore, forKey: .hasMore)
        try container.encode(nextCursor, forKey: .nextCursor)
    }

    enum CodingKeys: String, CodingKey { case messages, hasMore, nextCursor }
}

/// History's `nextCursor`: the page's `before` or `after` seq, in its reading direction.
enum HistoryCursor: Equatable {
    case before(Int64)
    case after(Int64)

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let seq = Int64(parts[1]), seq >= 0 else { return nil }
        switch parts[0] {
        case "before": self = .before(seq)
        case "after": self = .after(seq)
        default: return nil
        }
    }

    var encoded: String {
        switch self {
        case .before(let seq): "before:\(seq)"
        case .after(let seq): "after:\(seq)"
        }
    }

    /// Without a lower bound a page is the newest below its upper bound, and the next one is
    /// older; with one, the next one is newer.
    static func next(after page: [Message], query: HistoryQuery) -> HistoryCursor? {
        if query.after == nil && query.since == nil {
            return page.first.map { .before($0.seq) }
        }
        return page.last.map { .after($0.seq) }
    }
}
