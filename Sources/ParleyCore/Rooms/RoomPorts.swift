import Foundation

/// Rooms, memberships and messages. Every change also records its events (the
/// transactional outbox) in the same transaction.
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
    func room(id: Int64, for userID: Int64) async throws -> RoomView?
    func rooms(for userID: Int64, page: RoomPage) async throws -> (rooms: [RoomView], nextCursor: String?)
    /// Each room's newest messages as `viewer` sees them.
    func latestMessages(roomIDs: [Int64], count: Int, viewer: Int64) async throws -> [Int64: [Message]]
    /// Creates a multiparty room with its members (the creator as admin) and first message, if
    /// any. Throws `not-found` naming `members` when a user does not exist.
    func createMultiparty(
        creatorID: Int64, name: String, members: [Int64: RoomRole], firstMessage: NewMessage?
    ) async throws -> Int64
    /// The two-party room of a pair, created on first use; `created` tells which.
    func direct(userID: Int64, peerID: Int64) async throws -> (roomID: Int64, created: Bool)
    func rename(roomID: Int64, name: String, by userID: Int64) async throws
    /// Members by user id after `after`, at most `limit`.
    func members(roomID: Int64, after: Int64?, limit: Int) async throws -> [Member]
    func member(roomID: Int64, userID: Int64) async throws -> Member?
    /// Adds or changes a direct membership; throws `not-found` when the user does not exist.
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
    /// Stores a batch of messages (a group commit), each once per (room, sender, uid), with
    /// its reply and mentions as checked before (``RoomService``),
    /// `seq` gap-free per room in the batch's order: one outcome per submission, in order.
    /// A submission refused alone (a room gone, a file not the sender's) fails alone while the
    /// rest commit; a later submission of a key already in the batch answers as a retry
    /// (`created` false). Throws only when the batch as a whole could not be stored.
    func send(batch: [MessageSubmission]) async throws -> [SendOutcome]
    /// Stores a batch's new messages in one round trip where their senders hold at least
    /// `minimum` in the room, checked in the same statement: per submission its stored
    /// message, or nil, having stored nothing for it, when it is not that common case (a
    /// refusal, a retry, a later send of a key the batch holds; every submission when one
    /// is not plain (a file to mark submitted, a reply or mentions to check) or a send of the
    /// same key raced this one), for ``send(batch:)`` after the checks to answer.
    func sendIfAllowed(batch: [MessageSubmission], minimum: RoomRole) async throws -> [SentMessage?]
    /// A page of history as `viewer` sees it (`me` in reactions).
    func messages(roomID: Int64, query: HistoryQuery, viewer: Int64) async throws -> (
        messages: [Message], hasMore: Bool
    )
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
    /// Which of these keys name a stored message (sends that would be retries).
    func storedKeys(_ keys: Set<MessageKey>) async throws -> Set<MessageKey>
    /// The room and state of messages replies name; ids of no message are absent.
    func replyTargets(ids: Set<Int64>) async throws -> [Int64: ReplyTarget]
    /// Moves the read marker forward (never back) and returns where it stands; throws
    /// `not-found` for a message of another room.
    func markRead(roomID: Int64, userID: Int64, target: ReadMarker.Target) async throws -> ReadMarker
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
