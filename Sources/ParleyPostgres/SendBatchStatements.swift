import Foundation
import ParleyCore
import PostgresNIO

// The statements of a group commit (``PostgresRoomRepository/send(batch:)``): each handles a
// whole batch of sends, so a batch costs the same few round trips whatever its size. Arrays
// cannot carry SQL NULL elements here, so an absent file id travels as 0.

/// The effective roles of many (room, user) pairs: one index-backed lookup per pair, as
/// ``EffectiveRoleStatement`` does for one.
struct EffectiveRolesStatement: PostgresPreparedStatement {
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
/// and reads the last `seq` each handed out. `NO KEY UPDATE` is the lock a single send's
/// `UPDATE` takes: it leaves the key-share locks of foreign-key checks free (an outbox row or
/// read marker written meanwhile for the room by another transaction does not wait on it,
/// which could otherwise close a cycle through that transaction's read-marker row).
struct LockRoomsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT id, last_seq FROM messenger.chat_room WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE
        """
    typealias Row = (Int64, Int64)
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
    static let sql = """
        SELECT \(MessageColumns.list())
        FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS k(room_id, sender_id, uid)
        JOIN messenger.message m ON m.chat_room_id = k.room_id AND m.sent_by_id = k.sender_id AND m.uid = k.uid
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
        marker AS (
            INSERT INTO messenger.read_marker (chat_room_id, user_account_id, message_id, seq)
            SELECT DISTINCT ON (m.chat_room_id, m.sent_by_id) m.chat_room_id, m.sent_by_id, m.id, m.seq FROM m
            ORDER BY m.chat_room_id, m.sent_by_id, m.seq DESC
            \(ReadMarkerMove.forwardOnly)
        ), \(mentions ? mentioned + ", " : "")outboxed AS (
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

    /// Joined into the final select: one `NOTIFY` to the relay when anything was recorded.
    static let wake =
        "(SELECT pg_notify('\(Outbox.channel)', '') FROM (SELECT 1 FROM outboxed LIMIT 1) AS any_added) AS woken"
}

/// Stores the batch's new messages with the `seq`s handed out under the rooms' locks,
/// advances each room, moves each sender's read marker to their last message and records the
/// messages in the outbox in their order (the relay encodes their events), waking the relay
/// at commit: one statement, whatever the batch's size.
struct InsertMessagesStatement: PostgresPreparedStatement {
    static let sql = """
        WITH m AS (
            INSERT INTO messenger.message
                (chat_room_id, seq, sent_by_id, uid, content, file_id, reply_to_id, mentions, created_at)
            SELECT t.room_id, t.seq, t.sender_id, t.uid, t.content, nullif(t.file_id, 0), nullif(t.reply_to_id, 0),
                   t.mentions::bigint[], clock_timestamp()
            FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[],
                        $7::bigint[], $8::text[])
                AS t(room_id, seq, sender_id, uid, content, file_id, reply_to_id, mentions)
            ORDER BY t.room_id, t.seq
            RETURNING *
        ), room AS (
            UPDATE messenger.chat_room c
            SET last_seq = x.seq, last_message_at = x.at, updated_at = x.at,
                last_mention_seq = greatest(c.last_mention_seq, x.mention_seq)
            FROM (SELECT chat_room_id, max(seq) AS seq, max(created_at) AS at,
                         coalesce(max(seq) FILTER (WHERE cardinality(mentions) > 0), 0) AS mention_seq
                  FROM m GROUP BY chat_room_id) x
            WHERE c.id = x.chat_room_id
            RETURNING c.id, c.uid
        ), \(StoredBatchRecords.ctes(
            mentions: true,
            traceparent: StoredBatchRecords.traces(
                "$9::text[]",
                of: """
                    SELECT nullif(x.traceparent, '') FROM unnest($1::bigint[], $2::bigint[], $9::text[])
                        AS x(room_id, seq, traceparent)
                    WHERE x.room_id = m.chat_room_id AND x.seq = m.seq
                    """)))
        SELECT \(MessageColumns.list(
            roomUID: "room.uid", file: "(SELECT \(FileRecord.json) FROM cloud.file f WHERE f.id = m.file_id)",
            fresh: true))
        FROM m JOIN room ON room.id = m.chat_room_id \(MessageColumns.replyJoin)
            CROSS JOIN \(StoredBatchRecords.wake)
        """
    typealias Row = PostgresRow
    var roomIDs: [Int64] = []
    var seqs: [Int64] = []
    var senderIDs: [Int64] = []
    var uids: [String] = []
    var contents: [String] = []
    /// 0 for none.
    var fileIDs: [Int64] = []
    /// 0 for none.
    var replyToIDs: [Int64] = []
    /// Each message's as an array literal (`{1,2}`): arrays of arrays must be rectangular.
    var mentions: [String] = []
    /// One per message ("" for none); bound empty when none is traced.
    var traceparents: [String] = []

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 9)
        try bindings.append(roomIDs)
        try bindings.append(seqs)
        try bindings.append(senderIDs)
        try bindings.append(uids)
        try bindings.append(contents)
        try bindings.append(fileIDs)
        try bindings.append(replyToIDs)
        try bindings.append(mentions)
        try bindings.append(traceparents.contains { !$0.isEmpty } ? traceparents : [])
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}

/// The common batch in one round trip: stores the new messages of senders holding at least
/// `minimumRank` in their room, with no file, each once, and answers only those (by their
/// place in the batch, from 1). Everything else in the batch (a refusal, a sender blocked by
/// the other user of a two-party room, an archived room, a uid already stored, a later send of a key the batch
/// already holds) stores nothing here and is answered by the
/// general path (``PostgresRoomRepository/send(batch:)``).
///
/// Each room is locked, in id order, before it is updated (the update takes its rows from an
/// aggregate over the locked ones), as ``LockRoomsStatement`` locks them, so two batches never
/// wait for each other in a cycle. Each
/// room's new `seq`s follow the last one it handed out, read under that lock. A send of the
/// same key committed by another batch after this statement began ends it in a unique
/// violation, which the general path answers.
struct StoreNewMessagesStatement: PostgresPreparedStatement {
    static let sql = """
        WITH k AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
                WITH ORDINALITY AS k(room_id, sender_id, uid, content, place)
        ), fresh AS (
            SELECT DISTINCT ON (k.room_id, k.sender_id, k.uid) k.* FROM k
            WHERE (
                SELECT max(r.rank) FROM messenger.room_membership rm JOIN cloud.role r ON r.id = rm.role_id
                WHERE rm.chat_room_id = k.room_id AND rm.user_account_id = k.sender_id) >= $5::integer
              AND NOT EXISTS (
                SELECT 1 FROM messenger.message m
                WHERE m.chat_room_id = k.room_id AND m.sent_by_id = k.sender_id AND m.uid = k.uid)
            ORDER BY k.room_id, k.sender_id, k.uid, k.place
        ), locked AS (
            SELECT c.* FROM messenger.chat_room c
            WHERE c.id IN (SELECT room_id FROM fresh)
            ORDER BY c.id FOR NO KEY UPDATE
        ), allowed AS (
            -- An archived room, or a sender blocked in a two-party room, stores nothing here
            -- (the room is still locked, in order): the general path answers those sends.
            SELECT f.* FROM fresh f JOIN locked c ON c.id = f.room_id
            WHERE c.archived_at IS NULL AND NOT \(BlockRule.blockedIn(room: "c", sender: "f.sender_id"))
        ), counted AS (
            SELECT f.room_id, count(*) AS n FROM allowed f GROUP BY f.room_id
        ), room AS (
            UPDATE messenger.chat_room c
            SET last_seq = c.last_seq + x.n, last_message_at = clock_timestamp(), updated_at = clock_timestamp()
            FROM counted x WHERE c.id = x.room_id
            RETURNING c.id, c.uid, c.last_seq - x.n AS base, c.last_message_at AS at
        ), m AS (
            INSERT INTO messenger.message (chat_room_id, seq, sent_by_id, uid, content, created_at)
            SELECT f.room_id, room.base + row_number() OVER (PARTITION BY f.room_id ORDER BY f.place),
                   f.sender_id, f.uid, f.content, room.at
            FROM allowed f JOIN room ON room.id = f.room_id
            ORDER BY f.room_id, f.place
            RETURNING *
        ), \(StoredBatchRecords.ctes(
            mentions: false,
            traceparent: StoredBatchRecords.traces(
                "$6::text[]",
                of: """
                    SELECT nullif(($6::text[])[f.place::integer], '') FROM allowed f
                    WHERE f.room_id = m.chat_room_id AND f.sender_id = m.sent_by_id AND f.uid = m.uid
                    """)))
        SELECT f.place, \(MessageColumns.list(roomUID: "room.uid", file: "NULL::text", fresh: true, plain: true))
        FROM m JOIN room ON room.id = m.chat_room_id
            JOIN allowed f ON f.room_id = m.chat_room_id AND f.sender_id = m.sent_by_id AND f.uid = m.uid
            CROSS JOIN \(StoredBatchRecords.wake)
        """
    typealias Row = PostgresRow
    var roomIDs: [Int64] = []
    var senderIDs: [Int64] = []
    var uids: [String] = []
    var contents: [String] = []
    /// The lowest `cloud.role.rank` that may send.
    let minimumRank: Int32
    /// Empty, or one per send ("" for none): ``StoredBatchRecords/traceparents(of:)``.
    let traceparents: [String]

    /// - Parameter submissions: plain ones (``ParleyCore/NewMessage/isPlain``).
    init(_ submissions: [MessageSubmission], minimumRank: Int32) {
        for submission in submissions {
            roomIDs.append(submission.roomID)
            senderIDs.append(submission.senderID)
            uids.append(submission.message.uid)
            contents.append(submission.message.content)
        }
        self.minimumRank = minimumRank
        traceparents = StoredBatchRecords.traceparents(of: submissions)
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        try bindings.append(roomIDs)
        try bindings.append(senderIDs)
        try bindings.append(uids)
        try bindings.append(contents)
        try bindings.append(minimumRank)
        try bindings.append(traceparents)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}
