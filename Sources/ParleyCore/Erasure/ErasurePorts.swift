import Foundation

/// A message to tombstone, found by its sender.
public struct MessageRef: Sendable, Equatable, Hashable {
    public let id: Int64
    public let roomID: Int64

    public init(id: Int64, roomID: Int64) {
        self.id = id
        self.roomID = roomID
    }
}

/// A reaction to take back.
public struct ReactionRef: Sendable, Equatable, Hashable {
    public let message: MessageRef
    public let key: String

    public init(message: MessageRef, key: String) {
        self.message = message
        self.key = key
    }
}

/// What deleting accounts and rooms, and retention, change in storage. Every method is
/// idempotent: a job that runs twice finds nothing left the second time.
public protocol ErasureRepository: Sendable {
    /// Ends the account in one transaction: no login from now on (the e-mail is freed, the
    /// name becomes "Deleted user", no password opens it) and its push tokens gone. False
    /// when there is no such account, or it is deleted already.
    func endAccount(userID: Int64) async throws -> Bool
    /// Whether the account was deleted (the erasure job touches no other).
    func isAccountDeleted(userID: Int64) async throws -> Bool
    /// Multiparty rooms the user is a direct member of (left with the usual events).
    func multipartyRooms(ofDirectMember userID: Int64, limit: Int) async throws -> [Int64]
    /// Every other membership: two-party rooms, groups, application roles. The rooms are
    /// locked first, as membership changes lock them.
    func leaveRemainingRooms(userID: Int64) async throws
    /// The user's messages that are not tombstones yet.
    func liveMessages(sentBy userID: Int64, limit: Int) async throws -> [MessageRef]
    func reactions(by userID: Int64, limit: Int) async throws -> [ReactionRef]
    /// Deletes what is left of the user's personal data (devices, read markers, settings,
    /// blocks, mentions, avatar, export) and marks the account erased. Returns the files the
    /// user uploaded, made unsubmitted, for ``FileEraser``.
    func finishAccountErasure(userID: Int64) async throws -> [Int64]
    func accountsAwaitingErasure(deletedBefore: Date, limit: Int) async throws -> [Int64]

    /// Deletes a multiparty room for its members at once: every membership is gone (reads
    /// answer 404, the broker's cached decisions dropped), members get the `deleted` change.
    /// False when there is no such room or it is deleted already.
    func endRoom(roomID: Int64, by userID: Int64) async throws -> Bool
    /// Whether the room was deleted (the erasure job touches no other).
    func isRoomDeleted(roomID: Int64) async throws -> Bool
    /// Deletes up to `limit` messages of the room, all or those created before `cutoff`;
    /// returns how many, and the files no message carries any longer (unsubmitted now).
    func purgeMessages(roomID: Int64, createdBefore cutoff: Date?, limit: Int) async throws -> (
        count: Int, releasedFiles: [Int64]
    )
    /// Deletes the room's row once the outbox published its last events; false until then.
    func finishRoomErasure(roomID: Int64) async throws -> Bool
    func roomsAwaitingErasure(deletedBefore: Date, limit: Int) async throws -> [Int64]

    /// A room's own retention in days; nil: the server's default.
    func retentionDays(roomID: Int64) async throws -> Int?
    func setRetentionDays(roomID: Int64, days: Int?) async throws
    /// Rooms holding messages older than their retention (`defaultDays` where a room has none
    /// of its own), each with the time before which its messages go.
    func roomsPastRetention(defaultDays: Int?, now: Date, limit: Int) async throws -> [(roomID: Int64, cutoff: Date)]
}
