import Foundation

/// Messages: their history, their sends and the read markers they move. Every change also
/// records its events (the transactional outbox) in the same transaction. Who may write is
/// the room's rule (``RoomRepository/roles(of:)``, ``RoomRepository/sendRefusals(_:)``),
/// checked by ``RoomService`` before a send reaches ``send(batch:)``; the one-round-trip
/// ``sendIfAllowed(batch:minimum:)`` checks the same inside its statement.
public protocol MessageRepository: Sendable {
    /// Each room's newest messages as `viewer` sees them.
    func latestMessages(roomIDs: [Int64], count: Int, viewer: Int64) async throws -> [Int64: [Message]]
    /// Stores a batch of messages (a group commit), each once per (room, sender, uid), with
    /// its reply and mentions as checked before (``RoomService``),
    /// `seq` gap-free per room in the batch's order: one outcome per submission, in order.
    /// A submission refused alone (a room gone, a file not the sender's) fails alone while the
    /// rest commit; a later submission of a key already in the batch answers as a retry
    /// (`created` false). Throws only when the batch as a whole could not be stored.
    func send(batch: [MessageSubmission]) async throws -> [SendOutcome]
    /// Stores a batch's new messages in one round trip where their senders hold at least
    /// `minimum` in the room as its direct members, checked in the same statement: per
    /// submission its stored message, or nil, having stored nothing for it, when it is not that
    /// common case (a refusal, a role only through a group or an application role, a retry, a
    /// later send of a key the batch holds; every submission when one
    /// is not plain (a file to mark submitted, a reply or mentions to check) or a send of the
    /// same key raced this one), for ``send(batch:)`` after the checks to answer.
    func sendIfAllowed(batch: [MessageSubmission], minimum: RoomRole) async throws -> [SentMessage?]
    /// A page of history as `viewer` sees it (`me` in reactions; none for the app's server).
    func messages(roomID: Int64, query: HistoryQuery, viewer: Int64?) async throws -> (
        messages: [Message], hasMore: Bool
    )
    /// Which of these keys name a stored message (sends that would be retries).
    func storedKeys(_ keys: Set<MessageKey>) async throws -> Set<MessageKey>
    /// The room and state of messages replies name; ids of no message are absent.
    func replyTargets(ids: Set<Int64>) async throws -> [Int64: ReplyTarget]
    /// Moves the read marker forward (never back) and returns where it stands; throws
    /// `not-found` for a message of another room.
    func markRead(roomID: Int64, userID: Int64, target: ReadMarker.Target) async throws -> ReadMarker
}
