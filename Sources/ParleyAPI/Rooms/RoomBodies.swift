import Foundation
import ParleyCore

/// The JSON shapes of `rest-api.md` for rooms and messages.

struct RoomResponse: Codable, Sendable {
    let id: Int64
    let uid: String
    let topic: String
    let type: RoomView.Kind
    @NullEncoded var name: String?
    @NullEncoded var description: String?
    let archived: Bool
    let createdAt: Date
    @NullEncoded var lastMessageAt: Date?
    let myRole: RoomRole
    let lastSeq: Int64
    @NullEncoded var lastReadMessageId: Int64?
    @NullEncoded var lastReadSeq: Int64?
    let unreadCount: Int64
    let unreadMentionCount: Int64
    /// The other user of a two-party room; absent otherwise.
    let peer: UserResponse?
    @NullEncoded var avatar: FileObject?
    /// Only when asked for (`?latest=`).
    let latestMessages: [Message]?

    /// The room as `viewer` sees it (the peer's e-mail only for an administrator).
    init(_ room: RoomView, to viewer: AuthenticatedUser) {
        id = room.id
        uid = room.uid
        topic = room.topic
        type = room.type
        name = room.name
        description = room.description
        archived = room.archived
        createdAt = room.createdAt
        lastMessageAt = room.lastMessageAt
        myRole = room.myRole
        lastSeq = room.lastSeq
        lastReadMessageId = room.lastReadMessageId
        lastReadSeq = room.lastReadSeq
        unreadCount = room.unreadCount
        unreadMentionCount = room.unreadMentionCount
        peer = room.peer.map { UserResponse($0, to: viewer) }
        avatar = room.avatar
        latestMessages = room.latestMessages
    }
}

struct RoomsResponse: Codable, Sendable {
    let rooms: [RoomResponse]
    @NullEncoded var nextCursor: String?
}

struct CreateRoomRequest: Decodable {
    struct MemberBody: Decodable {
        let userId: Int64
        let role: RoomRole
    }
    let name: String
    let members: [MemberBody]
    /// Optional: a room without messages has `lastSeq` 0.
    let firstMessage: NewMessage?
}

/// `PATCH .../messages/{messageId}`: new content, and the mentions and metadata when they
/// change (`metadata: null` clears it).
struct EditMessageBody: Decodable {
    let content: String
    let mentions: [Int64]?
    /// Absent: unchanged; null: cleared.
    let metadata: MessageMetadata??

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        content = try container.decode(String.self, forKey: .content)
        mentions = try container.decodeIfPresent([Int64].self, forKey: .mentions)
        metadata =
            container.contains(.metadata)
            ? .some(try container.decodeIfPresent(MessageMetadata.self, forKey: .metadata)) : nil
    }

    enum CodingKeys: String, CodingKey { case content, mentions, metadata }
}

/// `PATCH /v1/rooms/{id}`: a new name, a new description (null clears it), or both.
struct RoomChangeRequest: Decodable {
    let name: String?
    /// Absent: unchanged; null: cleared.
    let description: String??

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        description =
            container.contains(.description)
            ? .some(try container.decodeIfPresent(String.self, forKey: .description)) : nil
    }

    enum CodingKeys: String, CodingKey { case name, description }
}

/// `PUT /v1/rooms/{id}/hidden`.
struct HiddenRequest: Decodable {
    let hidden: Bool
}

struct RoleRequestBody: Decodable {
    let role: RoomRole
}

/// A group's or application role's link: its role, and whether its members must stay.
struct LinkRequestBody: Decodable {
    let role: RoomRole
    let required: Bool?
}

/// A read marker's target: a message id or a `seq`, exactly one.
struct ReadRequest: Decodable {
    let messageId: Int64?
    let seq: Int64?
}

struct MemberResponse: ListItem {
    static let listKey = "members"

    let user: UserResponse
    let role: RoomRole
    let via: [String]

    init(_ member: Member, to viewer: AuthenticatedUser) {
        user = UserResponse(member.user, to: viewer)
        role = member.role
        via = member.via
    }
}

struct MessagesResponse: Codable, Sendable {
    let messages: [Message]
    let hasMore: Bool
    @NullEncoded var nextCursor: String?
}

/// History's `nextCursor`: the seq window of the next page, in the page's reading direction
/// (`before:5`, or `after:12,before:100` when the first page had both bounds). It stands
/// instead of `before` and `after`.
struct HistoryCursor: Equatable {
    let before: Int64?
    let after: Int64?

    init(before: Int64?, after: Int64?) {
        self.before = before
        self.after = after
    }

    init?(_ text: String) {
        var bounds: [Substring: Int64] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, ["before", "after"].contains(pair[0]), bounds[pair[0]] == nil,
                let seq = Int64(pair[1]), seq >= 0
            else { return nil }
            bounds[pair[0]] = seq
        }
        guard !bounds.isEmpty else { return nil }
        self.init(before: bounds["before"], after: bounds["after"])
    }

    var encoded: String {
        [after.map { "after:\($0)" }, before.map { "before:\($0)" }].compactMap { $0 }.joined(separator: ",")
    }

    /// Without a lower bound a page is the newest below its upper bound, and the next one is
    /// older; with one, the next one is newer, still below the page's upper bound.
    static func next(after page: [Message], query: HistoryQuery) -> HistoryCursor? {
        if query.after == nil && query.since == nil {
            return page.first.map { HistoryCursor(before: $0.seq, after: nil) }
        }
        return page.last.map { HistoryCursor(before: query.before, after: $0.seq) }
    }
}

/// The answer to an add that became an invitation (202).
struct InvitationResponse: Codable, Sendable {
    let invitation: Invitation
}

extension Invitation: ListItem {
    static let listKey = "invitations"
}
