import Foundation

/// Rooms and memberships (their messages: ``MessageRepository``). Every change also records
/// its events (the transactional outbox) in the same transaction.
public protocol RoomRepository: InvitationRepository {
    /// The user's effective role: the highest over direct, group and application-role paths.
    func role(roomID: Int64, userID: Int64) async throws -> RoomRole?
    /// The effective roles of many users in many rooms in one query; pairs without a role
    /// are absent.
    func roles(of members: Set<RoomUser>) async throws -> [RoomUser: RoomRole]
    /// The same, by the room's uid (as in MQTT topics).
    func role(roomUID: String, userID: Int64) async throws -> RoomRole?
    /// The id of the room with this uid.
    func roomID(uid: String) async throws -> Int64?
    /// The kind of room `id` is; nil when there is none (or it was deleted).
    func roomType(id: Int64) async throws -> RoomView.Kind?
    func room(id: Int64, for userID: Int64) async throws -> RoomView?
    func rooms(for userID: Int64, page: RoomPage) async throws -> (rooms: [RoomView], nextCursor: String?)
    /// Creates a multiparty room with its members (the creator, if any, as admin: none when the
    /// app's server creates it) and first message, if any. Throws `not-found` naming `members`
    /// when a user does not exist.
    func createMultiparty(
        creatorID: Int64?, name: String, description: String?, members: [Int64: RoomRole], firstMessage: NewMessage?
    ) async throws -> Int64
    /// The two-party room of a pair, created on first use; `created` tells which.
    func direct(userID: Int64, peerID: Int64) async throws -> (roomID: Int64, created: Bool)
    func rename(roomID: Int64, name: String, by userID: Int64) async throws
    /// Members by user id after `after`, at most `limit`.
    func members(roomID: Int64, after: Int64?, limit: Int) async throws -> [Member]
    func member(roomID: Int64, userID: Int64) async throws -> Member?
    /// Adds or changes a direct membership, ending a departure (the rules decide before whether
    /// one who left may be added back); throws `not-found` when the user does not exist.
    func setDirectMember(roomID: Int64, userID: Int64, role: RoomRole, by editorID: Int64) async throws
    /// Removes a direct membership; false when there was none.
    func removeDirectMember(roomID: Int64, userID: Int64, by editorID: Int64) async throws -> Bool
    /// The user leaves the room by every path but a required link (throws `forbidden` when
    /// one holds them): they come back only by an invitation
    /// (``InvitationRepository/hasLeft(roomID:userID:)``). False when they were no member.
    func leave(roomID: Int64, userID: Int64) async throws -> Bool
    /// Links a group or an application role (`link == nil` removes it); false when there
    /// was nothing to remove. Throws `not-found` when the group or role does not exist.
    /// A `required` link's members cannot leave the room.
    func setGroup(roomID: Int64, groupID: Int64, role: RoomRole?, required: Bool, by editorID: Int64) async throws
        -> Bool
    func setAppRole(roomID: Int64, appRoleID: Int64, role: RoomRole?, required: Bool, by editorID: Int64)
        async throws -> Bool
    /// Whether `blockerID` blocked `userID`.
    func isBlocked(_ userID: Int64, by blockerID: Int64) async throws -> Bool
    /// Why members who hold a writer's role may still not send: their room is archived, or
    /// the other user of their two-party room blocked them. Members who may are absent.
    func sendRefusals(_ members: Set<RoomUser>) async throws -> [RoomUser: SendRefusal]
    /// Archives the room (read-only) or takes it out of the archive, recording the change;
    /// false when it already was so.
    func setArchived(roomID: Int64, archived: Bool, by userID: Int64) async throws -> Bool
    /// Hides the room from the user's list until a message arrives after now, or shows it again.
    func setHidden(roomID: Int64, userID: Int64, hidden: Bool) async throws
    /// Sets or clears the room's description, recording the change.
    func describe(roomID: Int64, description: String?, by userID: Int64) async throws
}

/// Why a writer may not send to a room.
public enum SendRefusal: Sendable, Equatable {
    case archived
    case blocked

    public var error: ParleyError {
        switch self {
        case .archived: RoomService.archived
        case .blocked: BlockService.refusal
        }
    }
}

/// The message a reply names: its room, and whether it is deleted.
public struct ReplyTarget: Sendable, Equatable {
    public let roomID: Int64
    public let deleted: Bool

    public init(roomID: Int64, deleted: Bool) {
        self.roomID = roomID
        self.deleted = deleted
    }
}

/// A page of the room list.
public struct RoomPage: Sendable, Equatable {
    public var limit: Int
    public var cursor: String?
    /// Only rooms changed or with messages after this instant (the light sync).
    public var since: Date?

    public init(limit: Int = 20, cursor: String? = nil, since: Date? = nil) {
        self.limit = limit
        self.cursor = cursor
        self.since = since
    }
}
