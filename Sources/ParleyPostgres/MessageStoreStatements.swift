import Foundation
import ParleyCore
import PostgresNIO

/// The one statement that stores messages, in the two shapes the send paths need (see
/// <doc:MessagePipelinePerformance>). Both take the sends as arrays in the batch's order,
/// hand each room's new `seq`s out after the last one under the room's lock, advance the room,
/// insert the messages and what every stored message writes besides (``StoredBatchRecords``),
/// and answer each stored message with its place in the batch (from 1), then its columns
/// (``MessageColumns``), then its room's readers version (``readersVersionColumn``).
///
/// - ``Shape/checked``: the common batch in one round trip (``StoreNewMessagesStatement``).
///   It checks in the statement what the general path checks before it, and stores only the
///   plain new messages of writers.
/// - ``Shape/single``: the same for a batch of one send (``StoreOneNewMessageStatement``),
///   without what orders, numbers and counts a batch's sends per room.
/// - ``Shape/prepared``: the general path's last step (``InsertMessagesStatement``), after
///   its checks, its files and its retries, with the rooms already locked.
enum MessageStore {
    enum Shape {
        case checked
        case single
        case prepared
    }

    /// Where a stored message's room's readers version is in its row.
    static let readersVersionColumn = 1 + MessageColumns.count

    /// Bindings every shape shares: `$1` rooms, `$2` senders, `$3` uids, `$4` contents, `$5`
    /// traceparents (``StoredBatchRecords/traceparents(of:)``). ``Shape/checked`` and
    /// ``Shape/single`` add `$6`, the lowest rank that may send, and `$7`, whether to notify
    /// the relay (not when it runs here and is woken directly: ``LocalRelay``);
    /// ``Shape/prepared`` adds `$6` attachments and `$8` mentions (each an array literal), `$7`
    /// reply targets (0 for none: arrays carry no NULL elements here), `$9` types and `$10`
    /// metadata ('' for none).
    static func sql(_ shape: Shape) -> String {
        let one = shape == .single
        return """
            WITH \(sends(shape)), \(one ? oneRoomMoved : roomsMoved), m AS (
                INSERT INTO messenger.message
                    (chat_room_id, seq, sent_by_id, uid, content, file_id, reply_to_id, mentions, type, metadata,
                     created_at)
                SELECT s.room_id, room.base + \(one ? "1" : "s.nth"), nullif(s.sender_id, 0), s.uid, s.content,
                       s.attachments[1], s.reply_to_id, s.mentions, s.type, s.metadata, room.at
                FROM \(one ? "allowed" : "numbered") s JOIN room ON room.id = s.room_id
                \(one ? "" : "ORDER BY s.room_id, s.place")
                RETURNING *
            ), \(shape == .prepared ? attached : "")\(StoredBatchRecords.ctes(
            mentions: shape == .prepared,
            traceparent: StoredBatchRecords.traces(
                "$5::text[]",
                of: """
                    SELECT nullif(($5::text[])[s.place::integer], '') FROM allowed s
                    WHERE s.room_id = m.chat_room_id AND s.sender_id = coalesce(m.sent_by_id, 0) AND s.uid = m.uid
                    """)))
            SELECT s.place, \(columns(shape)), room.readers_version
            FROM m JOIN room ON room.id = m.chat_room_id
                JOIN allowed s ON s.room_id = m.chat_room_id AND s.sender_id = coalesce(m.sent_by_id, 0) AND s.uid = m.uid
                \(shape == .prepared ? MessageColumns.replyJoin : "") CROSS JOIN \(StoredBatchRecords.wake(when: shape == .prepared ? "true" : "$7::boolean"))
            """
    }

    private static func sends(_ shape: Shape) -> String {
        switch shape {
        case .checked: checkedSends(one: false)
        case .single: checkedSends(one: true)
        case .prepared: preparedSends
        }
    }

    /// Each room's sends numbered in the batch's order, and the rooms moved on by their count
    /// (`room`: each room's `seq` before the batch as `base`).
    private static let roomsMoved = """
        numbered AS (
            SELECT s.*, row_number() OVER (PARTITION BY s.room_id ORDER BY s.place) AS nth FROM allowed s
        ), counted AS (
            SELECT room_id, count(*) AS n, coalesce(max(nth) FILTER (WHERE cardinality(mentions) > 0), 0) AS mention_nth
            FROM numbered GROUP BY room_id
        ), room AS (
            UPDATE messenger.chat_room c
            SET last_seq = c.last_seq + x.n, last_message_at = clock_timestamp(), updated_at = clock_timestamp(),
                last_mention_seq = CASE WHEN x.mention_nth > 0 THEN c.last_seq + x.mention_nth
                                        ELSE c.last_mention_seq END
            FROM counted x WHERE c.id = x.room_id
            RETURNING c.id, c.uid, c.last_seq - x.n AS base, c.last_message_at AS at, c.readers_version
        )
        """

    /// One plain send's room moved on by one (no mention: a plain message has none).
    private static let oneRoomMoved = """
        room AS (
            UPDATE messenger.chat_room c
            SET last_seq = c.last_seq + 1, last_message_at = clock_timestamp(), updated_at = clock_timestamp()
            FROM allowed x WHERE c.id = x.room_id
            RETURNING c.id, c.uid, c.last_seq - 1 AS base, c.last_message_at AS at, c.readers_version
        )
        """

    /// The sends of writers, each key once, not stored before, in a room not archived and not
    /// blocked to them: the general path answers every other send. Each room is locked, in id
    /// order, before it is updated (as ``LockRoomsStatement`` locks them), so two batches never
    /// wait for each other in a cycle. A send of the same key committed by another batch after
    /// this statement began ends it in a unique violation, which the general path answers.
    ///
    /// The writer check reads the direct membership only, not the view that adds groups and
    /// application roles: a role through those is the highest of several, so a direct writer is
    /// a writer whatever else holds, and a writer only through a group is left to the general
    /// path, which reads the view. The view's three branches made a fifth of the statement's
    /// executor set-up on every batch, for memberships most rooms do not have.
    ///
    /// One send (`one`) is read from the arrays' first elements, and neither keyed once nor
    /// ordered: without the unnest, the sorts and the per-room numbering, its statement took
    /// 0.45–0.60 ms (`pgbench`, a send rolled back) against 0.79–0.81 ms.
    private static func checkedSends(one: Bool) -> String {
        """
        k AS (
            \(one ? oneSend : unnestedSends)
        ), fresh AS (
            SELECT \(one ? "" : "DISTINCT ON (k.room_id, k.sender_id, k.uid) ")k.* FROM k
            WHERE EXISTS (
                SELECT 1 FROM messenger.chat_room_to_user_account rm JOIN cloud.role r ON r.id = rm.role_id
                WHERE rm.chat_room_id = k.room_id AND rm.user_account_id = k.sender_id AND r.rank >= $6::integer)
              AND NOT EXISTS (
                SELECT 1 FROM messenger.message m
                WHERE m.chat_room_id = k.room_id AND m.sent_by_id = k.sender_id AND m.uid = k.uid)
            \(one ? "" : "ORDER BY k.room_id, k.sender_id, k.uid, k.place")
        ), locked AS (
            SELECT c.* FROM messenger.chat_room c
            \(one ? "WHERE c.id = (SELECT room_id FROM fresh)" : "WHERE c.id IN (SELECT room_id FROM fresh) ORDER BY c.id")
            FOR NO KEY UPDATE
        ), allowed AS (
            SELECT f.room_id, f.sender_id, f.uid, f.content, f.place, '{}'::bigint[] AS attachments,
                   NULL::bigint AS reply_to_id, '{}'::bigint[] AS mentions, 'text' AS type, NULL::jsonb AS metadata
            FROM fresh f JOIN locked c ON c.id = f.room_id
            WHERE c.archived_at IS NULL AND NOT \(BlockRule.blockedIn(room: "c", sender: "f.sender_id"))
        )
        """
    }

    private static let unnestedSends = """
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
            WITH ORDINALITY AS k(room_id, sender_id, uid, content, place)
        """

    private static let oneSend = """
        SELECT ($1::bigint[])[1] AS room_id, ($2::bigint[])[1] AS sender_id, ($3::text[])[1] AS uid,
               ($4::text[])[1] AS content, 1::bigint AS place
        """

    /// The sends the general path let through, each key once, their rooms locked.
    private static let preparedSends = """
        allowed AS (
            SELECT k.room_id, k.sender_id, k.uid, k.content, k.place, k.attachments::bigint[] AS attachments,
                   nullif(k.reply_to_id, 0) AS reply_to_id, k.mentions::bigint[] AS mentions, k.type,
                   nullif(k.metadata, '')::jsonb AS metadata
            FROM unnest(
                $1::bigint[], $2::bigint[], $3::text[], $4::text[], $6::text[], $7::bigint[], $8::text[], $9::text[],
                $10::text[]
            ) WITH ORDINALITY
                AS k(room_id, sender_id, uid, content, attachments, reply_to_id, mentions, type, metadata, place)
        )
        """

    /// Every file of each stored message, in order (the first is also its `file_id`).
    private static let attached = """
        attached AS (
            INSERT INTO messenger.message_attachment (message_id, position, file_id)
            SELECT m.id, a.nth - 1, a.file_id
            FROM m JOIN allowed s ON s.room_id = m.chat_room_id AND s.sender_id = coalesce(m.sent_by_id, 0) AND s.uid = m.uid
                CROSS JOIN LATERAL unnest(s.attachments) WITH ORDINALITY AS a(file_id, nth)
        ),
        """

    /// A plain message has no file and no reply to join.
    private static func columns(_ shape: Shape) -> String {
        switch shape {
        case .checked, .single:
            MessageColumns.list(roomUID: "room.uid", file: "NULL::text", fresh: true, plain: true)
        case .prepared:
            // The statement's own attachment rows are not visible to it: the files come from the sends.
            MessageColumns.list(
                roomUID: "room.uid", file: "(SELECT \(FileRecord.json) FROM cloud.file f WHERE f.id = m.file_id)",
                attachments: """
                    CASE WHEN cardinality(s.attachments) = 0 THEN NULL ELSE (
                        SELECT json_agg(\(FileRecord.object) ORDER BY a.nth)::text
                        FROM unnest(s.attachments) WITH ORDINALITY AS a(file_id, nth) JOIN cloud.file f ON f.id = a.file_id)
                    END
                    """, fresh: true)
        }
    }
}

/// The common batch in one round trip (``MessageStore/Shape/checked``): stores the new
/// messages of senders holding at least `minimumRank` in their room, plain ones only
/// (``ParleyCore/NewMessage/isPlain``), and answers only those.
struct StoreNewMessagesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = MessageStore.sql(.checked)
    typealias Row = PostgresRow
    let sends: MessageStoreArrays
    /// The lowest `cloud.role.rank` that may send.
    let minimumRank: Int32
    /// Whether the commit notifies the relay.
    let notifies: Bool

    init(_ submissions: [MessageSubmission], minimumRank: Int32, notifies: Bool = true) {
        sends = MessageStoreArrays(submissions)
        self.minimumRank = minimumRank
        self.notifies = notifies
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        try sends.append(to: &bindings)
        try bindings.append(minimumRank)
        try bindings.append(notifies)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}

/// A batch of one send stored as ``StoreNewMessagesStatement`` stores it
/// (``MessageStore/Shape/single``): most batches at the rates a chat runs at.
struct StoreOneNewMessageStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = MessageStore.sql(.single)
    typealias Row = PostgresRow
    let batch: StoreNewMessagesStatement

    func makeBindings() throws -> PostgresBindings { try batch.makeBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}

/// The general path's store (``MessageStore/Shape/prepared``): every send given, with its
/// files, reply, mentions, type and metadata, checked before.
struct InsertMessagesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = MessageStore.sql(.prepared)
    typealias Row = PostgresRow
    let sends: MessageStoreArrays
    /// Each message's as an array literal (`{1,2}`): arrays of arrays must be rectangular.
    let attachments: [String]
    /// 0 for none.
    let replyToIDs: [Int64]
    /// Each message's as an array literal.
    let mentions: [String]
    let types: [String]
    /// "" for none.
    let metadata: [String]

    /// - Parameter submissions: each key once.
    init(_ submissions: [MessageSubmission]) {
        sends = MessageStoreArrays(submissions)
        attachments = submissions.map { Self.literal($0.message.attachments) }
        replyToIDs = submissions.map { $0.message.replyToId ?? 0 }
        mentions = submissions.map { Self.literal($0.message.mentions) }
        types = submissions.map(\.message.type.rawValue)
        metadata = submissions.map { $0.message.metadata?.json ?? "" }
    }

    private static func literal(_ ids: [Int64]) -> String {
        "{" + ids.map(String.init).joined(separator: ",") + "}"
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        try sends.append(to: &bindings)
        try bindings.append(attachments)
        try bindings.append(replyToIDs)
        try bindings.append(mentions)
        try bindings.append(types)
        try bindings.append(metadata)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}

/// The bindings `$1` to `$5` both shapes share.
struct MessageStoreArrays {
    var roomIDs: [Int64] = []
    var senderIDs: [Int64] = []
    var uids: [String] = []
    var contents: [String] = []
    /// Empty, or one per send ("" for none): ``StoredBatchRecords/traceparents(of:)``.
    let traceparents: [String]

    init(_ submissions: [MessageSubmission]) {
        for submission in submissions {
            roomIDs.append(submission.roomID)
            senderIDs.append(submission.senderID)
            uids.append(submission.message.uid)
            contents.append(submission.message.content)
        }
        traceparents = StoredBatchRecords.traceparents(of: submissions)
    }

    func append(to bindings: inout PostgresBindings) throws {
        try bindings.append(roomIDs)
        try bindings.append(senderIDs)
        try bindings.append(uids)
        try bindings.append(contents)
        try bindings.append(traceparents)
    }
}
