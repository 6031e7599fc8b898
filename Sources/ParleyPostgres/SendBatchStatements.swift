import Foundation
import ParleyCore
import PostgresNIO

// The statements of a group commit (``PostgresMessageRepository/send(batch:)``): each handles a
// whole batch of sends, so a batch costs the same few round trips whatever its size. Arrays
// cannot carry SQL NULL elements here, so an absent file id travels as 0.

/// The effective roles of many (room, user) pairs: one index-backed lookup per pair, as
/// ``EffectiveRoleStatement`` does for one.
struct EffectiveRolesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT p.room_id, p.user_id, (
            SELECT max(r.rank) FROM messenger.room_membership m JOIN cloud.role r ON r.id = m.role_id
            WHERE m.chat_room_id = p.room_id AND m.user_account_id = p.user_id)
        FROM unnest($1::bigint[], $2::bigint[]) AS p(room_id, user_id)
        """
    typealias Row = (Int64, Int64, Int?)
    let roomIDs: [Int64]
    let userIDs: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(roomIDs)
        try bindings.append(userIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Marks the batch's files submitted where the sender uploaded them; returns those. The rows
/// are locked in id order first, so two batches sharing files never wait for each other in a
/// cycle (files before rooms, as a single send locks them).
struct SubmitFilesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        WITH owned AS (
            SELECT f.id FROM cloud.file f
            JOIN unnest($1::bigint[], $2::bigint[]) AS t(id, owner_id) ON f.id = t.id AND f.uploaded_by_id = t.owner_id
            ORDER BY f.id FOR NO KEY UPDATE OF f
        )
        UPDATE cloud.file f SET submitted = true FROM owned WHERE f.id = owned.id
        RETURNING f.id, f.uploaded_by_id
        """
    typealias Row = (Int64, Int64)
    let fileIDs: [Int64]
    let ownerIDs: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(fileIDs)
        try bindings.append(ownerIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Locks the batch's rooms in id order (two batches never wait for each other in a cycle)
/// and answers those that exist. `NO KEY UPDATE` is the lock a single send's
/// `UPDATE` takes: it leaves the key-share locks of foreign-key checks free (an outbox row or
/// read marker written meanwhile for the room by another transaction does not wait on it,
/// which could otherwise close a cycle through that transaction's read-marker row).
struct LockRoomsStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT id FROM messenger.chat_room WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE
        """
    typealias Row = Int64
    let roomIDs: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        try bindings.append(roomIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The messages of the batch's keys that are already stored (retries). Run after the rooms
/// are locked, it sees every send to them that committed before.
struct StoredMessagesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT \(MessageColumns.list())
        FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS k(room_id, sender_id, uid)
        JOIN messenger.message m ON m.chat_room_id = k.room_id AND m.uid = k.uid
            AND (m.sent_by_id = k.sender_id OR (k.sender_id = 0 AND m.sent_by_id IS NULL AND m.type = 'system'))
        JOIN messenger.chat_room c ON c.id = m.chat_room_id
        LEFT JOIN cloud.file f ON f.id = m.file_id
        \(MessageColumns.replyJoin)
        """
    typealias Row = PostgresRow
    let roomIDs: [Int64]
    let senderIDs: [Int64]
    let uids: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        try bindings.append(roomIDs)
        try bindings.append(senderIDs)
        try bindings.append(uids)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}

/// What every insert of messages (a single send's and a batch's) writes besides them (the CTE
/// `m`): each sender's read marker moved to their last message, the mentions of others, and
/// the messages' outbox rows in their order.
enum StoredBatchRecords {
    /// One row per user a message mentions, the sender aside.
    static let mentioned = """
        mentioned AS (
            INSERT INTO messenger.mention (user_account_id, chat_room_id, seq, message_id)
            SELECT u.id, m.chat_room_id, m.seq, m.id FROM m CROSS JOIN LATERAL unnest(m.mentions) AS u(id)
            WHERE u.id IS DISTINCT FROM m.sent_by_id
            ON CONFLICT DO NOTHING
        )
        """
    /// - Parameters:
    ///   - mentions: whether the messages may mention anyone (plain ones do not).
    ///   - traceparent: each message's trace (``ParleyCore/PipelineTrace``), an expression
    ///     over the row of `m`.
    static func ctes(mentions: Bool, traceparent: String) -> String {
        """
        \(ReadMarkerMove.ctes(of: """
            SELECT DISTINCT ON (m.chat_room_id, m.sent_by_id)
                m.chat_room_id, m.sent_by_id AS user_account_id, m.id AS message_id, m.seq
            FROM m WHERE m.sent_by_id IS NOT NULL
            ORDER BY m.chat_room_id, m.sent_by_id, m.seq DESC
            """)), \(mentions ? mentioned + ", " : "")outboxed AS (
            INSERT INTO messenger.outbox (chat_room_id, message_id, traceparent)
            SELECT m.chat_room_id, m.id, \(traceparent) FROM m ORDER BY m.id
            RETURNING id
        )
        """
    }

    /// The traces of a batch's messages, `array` holding one per send in the batch's order (or
    /// none at all when none is traced: then nothing is looked up).
    static func traces(_ array: String, of send: String) -> String {
        "CASE WHEN cardinality(\(array)) > 0 THEN (\(send)) END"
    }

    /// The array of traceparents a statement binds: empty when no send is traced, so that
    /// tracing off costs the insert nothing.
    static func traceparents(of submissions: [MessageSubmission]) -> [String] {
        guard submissions.contains(where: { $0.traceparent != nil }) else { return [] }
        return submissions.map { $0.traceparent ?? "" }
    }

    /// Joined into the final select: one `NOTIFY` to the relay when anything was recorded and
    /// `condition` (an SQL boolean) holds; no row when nothing was.
    static func wake(when condition: String) -> String {
        """
        (SELECT CASE WHEN \(condition) THEN pg_notify('\(Outbox.channel)', '') END
         FROM (SELECT 1 FROM outboxed LIMIT 1) AS any_added) AS woken
        """
    }
}
