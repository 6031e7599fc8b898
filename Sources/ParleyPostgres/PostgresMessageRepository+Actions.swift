import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Edits, tombstones, reactions, threads and changes (see <doc:MessageActions>).
///
/// Every change locks its room's row (after a deletion's file, as sends lock files before
/// rooms), which every send to the room also locks: the room's changes and sends follow each
/// other, their events' outbox rows and change times are in the room's commit order, and a
/// reaction's count and a message's key limit are exact. Each also moves the room's
/// `updated_at`, so the room list's light sync (`since`) brings the room whose latest
/// messages changed.
extension PostgresMessageRepository: MessageActionRepository {
    public func facts(messageID: Int64, roomID: Int64) async throws -> MessageFacts? {
        let row = try await database.client.query(
            """
            SELECT seq, sent_by_id, created_at, content, file_id, mentions, deleted_at IS NOT NULL
            FROM messenger.message WHERE id = \(messageID) AND chat_room_id = \(roomID)
            """, logger: logger
        ).first((Int64, Int64?, Date, String, Int64?, [Int64], Bool).self)
        return row.map {
            MessageFacts(
                id: messageID, roomID: roomID, seq: $0.0, senderID: $0.1, createdAt: $0.2, content: $0.3, fileID: $0.4,
                mentions: $0.5, deleted: $0.6)
        }
    }

    public func message(id: Int64, roomID: Int64, viewer: Int64) async throws -> Message? {
        try await message(id: id, roomID: roomID, viewer: viewer, on: nil)
    }

    private func message(id: Int64, roomID: Int64, viewer: Int64?, on connection: PostgresConnection?) async throws
        -> Message?
    {
        let query: PostgresQuery = """
            SELECT \(unescaped: MessageColumns.list()) FROM \(unescaped: MessageColumns.source)
            WHERE m.id = \(id) AND m.chat_room_id = \(roomID)
            """
        let rows =
            if let connection {
                try await connection.query(query, logger: logger).collect()
            } else {
                try await database.client.query(query, logger: logger).collect()
            }
        return try await messages(from: rows, viewer: viewer, on: connection).first
    }

    public func edit(
        messageID: Int64, roomID: Int64, content: String, mentions: [Int64]?, metadata: MessageMetadata??
    ) async throws -> Bool {
        let keepsMetadata = metadata == nil
        let newMetadata = metadata??.json
        return try await database.transaction(logger: logger) { connection in
            guard try await lockRoom(roomID, on: connection) else { return false }
            let edited = try await connection.query(
                """
                UPDATE messenger.message
                SET content = \(content), mentions = coalesce(\(mentions)::bigint[], mentions),
                    metadata = CASE WHEN \(keepsMetadata) THEN metadata ELSE \(newMetadata)::jsonb END,
                    edited_at = clock_timestamp()
                WHERE id = \(messageID) AND chat_room_id = \(roomID) AND deleted_at IS NULL
                RETURNING seq, sent_by_id
                """, logger: logger
            ).first((Int64, Int64?).self)
            guard let (seq, senderID) = edited else { return false }
            var mentionSeq: Int64 = 0
            if let mentions {
                // The unread mentions follow the new text; an edit pushes nobody. (A row deleted
                // and inserted again in one statement would stay deleted: who stays is kept.)
                try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM messenger.mention
                        WHERE message_id = \(messageID) AND user_account_id <> ALL(\(mentions)::bigint[]))
                    INSERT INTO messenger.mention (user_account_id, chat_room_id, seq, message_id)
                    SELECT u.id, \(roomID), \(seq), \(messageID) FROM unnest(\(mentions)::bigint[]) AS u(id)
                    WHERE u.id IS DISTINCT FROM \(senderID)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                if !mentions.isEmpty { mentionSeq = seq }
            }
            try await recordChange(of: [messageID], roomID: roomID, mentionSeq: mentionSeq, on: connection)
            guard let message = try await message(id: messageID, roomID: roomID, viewer: nil, on: connection) else {
                return false
            }
            try await Outbox.record(.messageEdited(message), on: connection, logger: logger)
            return true
        }
    }

    public func delete(messageIDs: [Int64], roomID: Int64, by userID: Int64) async throws {
        guard !messageIDs.isEmpty else { return }
        try await database.transaction(logger: logger) { connection in
            // Files are locked before rooms, as sends lock them: the files first, read unlocked.
            let live = try await connection.query(
                """
                SELECT m.id, coalesce(array_agg(a.file_id) FILTER (WHERE a.file_id IS NOT NULL), '{}')
                FROM messenger.message m LEFT JOIN messenger.message_attachment a ON a.message_id = m.id
                WHERE m.id = ANY(\(messageIDs)) AND m.chat_room_id = \(roomID) AND m.deleted_at IS NULL
                GROUP BY m.id
                """, logger: logger
            ).all((Int64, [Int64]).self)
            guard !live.isEmpty else { return }
            let attached = Dictionary(uniqueKeysWithValues: live)
            let files = Set(attached.values.joined()).sorted()
            if !files.isEmpty {
                try await connection.query(
                    "SELECT 1 FROM cloud.file WHERE id = ANY(\(files)) ORDER BY id FOR NO KEY UPDATE", logger: logger)
            }
            guard try await lockRoom(roomID, on: connection) else { return }
            let deleted = try await connection.query(
                """
                UPDATE messenger.message
                SET content = '', file_id = NULL, mentions = '{}', metadata = NULL, deleted_at = clock_timestamp(),
                    deleted_by_id = \(userID)
                WHERE id = ANY(\(messageIDs)) AND chat_room_id = \(roomID) AND deleted_at IS NULL
                RETURNING id, seq, deleted_at
                """, logger: logger
            ).all((Int64, Int64, Date).self).sorted { $0.1 < $1.1 }
            guard let lastSeq = deleted.last?.1 else { return }
            let ids = deleted.map(\.0)
            try await connection.query(
                """
                WITH reactions AS (DELETE FROM messenger.reaction WHERE message_id = ANY(\(ids))),
                    files AS (DELETE FROM messenger.message_attachment WHERE message_id = ANY(\(ids)))
                DELETE FROM messenger.mention WHERE message_id = ANY(\(ids))
                """, logger: logger)
            let released = Set(ids.flatMap { attached[$0] ?? [] }).sorted()
            if !released.isEmpty {
                // No longer submitted by any message: the orphan sweep removes them. A statement of
                // its own, under the files' locks: its snapshot sees every send that attached
                // one before, and no send attaches one until this commits.
                try await connection.query(
                    """
                    UPDATE cloud.file f SET submitted = false
                    WHERE f.id = ANY(\(released))
                      AND NOT EXISTS (SELECT 1 FROM messenger.message_attachment a WHERE a.file_id = f.id)
                    """, logger: logger)
            }
            try await recordChange(of: ids, roomID: roomID, deletedSeq: lastSeq, on: connection)
            let events = deleted.map { id, seq, deletedAt in
                DomainEvent.messageDeleted(
                    RoomEvent.Deleted(id: id, seq: seq, chatRoomId: roomID, deletedAt: deletedAt, deletedById: userID))
            }
            try await Outbox.record(events, on: connection, logger: logger)
        }
    }

    public func setReaction(
        messageID: Int64, roomID: Int64, key: String, userID: Int64, add: Bool, maximumKeys: Int
    ) async throws -> ReactionResult {
        try await database.transaction(logger: logger) { connection in
            // The room's lock serialises the room's changes: counts and the key limit are exact.
            guard try await lockRoom(roomID, on: connection) else { return .noSuchMessage }
            let found = try await connection.query(
                """
                SELECT deleted_at IS NOT NULL FROM messenger.message
                WHERE id = \(messageID) AND chat_room_id = \(roomID)
                """, logger: logger
            ).first(Bool.self)
            guard let deleted = found else { return .noSuchMessage }
            let changed: Bool
            if add {
                guard !deleted else { return .messageDeleted }
                let (keys, present) = try await connection.query(
                    """
                    SELECT count(DISTINCT key), coalesce(bool_or(key = \(key)), false)
                    FROM messenger.reaction WHERE message_id = \(messageID)
                    """, logger: logger
                ).single((Int64, Bool).self)
                guard present || keys < maximumKeys else { return .tooManyKeys }
                changed =
                    try await connection.query(
                        """
                        INSERT INTO messenger.reaction (message_id, key, user_account_id)
                        VALUES (\(messageID), \(key), \(userID)) ON CONFLICT DO NOTHING RETURNING 1
                        """, logger: logger
                    ).first(Int32.self) != nil
            } else {
                changed =
                    try await connection.query(
                        """
                        DELETE FROM messenger.reaction
                        WHERE message_id = \(messageID) AND key = \(key) AND user_account_id = \(userID)
                        RETURNING 1
                        """, logger: logger
                    ).first(Int32.self) != nil
            }
            guard changed else { return .unchanged }
            let count = try await connection.query(
                "SELECT count(*) FROM messenger.reaction WHERE message_id = \(messageID) AND key = \(key)",
                logger: logger
            ).single(Int64.self)
            let at = try await recordChange(of: [messageID], roomID: roomID, on: connection)
            let change = RoomEvent.ReactionChanged(
                messageId: messageID, chatRoomId: roomID, key: key, userId: userID, added: add, count: count)
            try await Outbox.record(.reactionChanged(ReactionChange(change, at: at)), on: connection, logger: logger)
            return .changed(count: count)
        }
    }

    /// Locks the room's row as every send to it does (each change of a room's messages takes
    /// it before its message, after any file): the room's changes and sends commit, and record
    /// their events, one after another. False when there is no such room.
    private func lockRoom(_ roomID: Int64, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query(
            "SELECT 1 FROM messenger.chat_room WHERE id = \(roomID) FOR NO KEY UPDATE", logger: logger
        ).first(Int32.self) != nil
    }

    /// Records when the messages changed (what `changedSince` pages by; stamped under the
    /// room's lock, so in the room's commit order) and moves the room's `updated_at` (and its
    /// highest mentioning or deleted `seq`) forward. Returns the latest change's time.
    @discardableResult
    private func recordChange(
        of messageIDs: [Int64], roomID: Int64, mentionSeq: Int64 = 0, deletedSeq: Int64 = 0,
        on connection: PostgresConnection
    ) async throws -> Date {
        try await connection.query(
            """
            WITH room AS (
                UPDATE messenger.chat_room
                SET updated_at = clock_timestamp(), last_mention_seq = greatest(last_mention_seq, \(mentionSeq)),
                    last_deleted_seq = greatest(last_deleted_seq, \(deletedSeq))
                WHERE id = \(roomID)
            ), changed AS (
                INSERT INTO messenger.message_change (message_id, chat_room_id, changed_at)
                SELECT id, \(roomID), clock_timestamp() FROM unnest(\(messageIDs)::bigint[]) AS id
                ON CONFLICT (message_id) DO UPDATE SET changed_at = excluded.changed_at
                RETURNING changed_at
            )
            SELECT max(changed_at) FROM changed
            """, logger: logger
        ).single(Date.self)
    }

    public func reactors(messageID: Int64, key: String, after: Int64?, limit: Int) async throws -> [User] {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: UserRecord.columns("u"))
            FROM messenger.reaction r JOIN cloud.user_account u ON u.id = r.user_account_id
            WHERE r.message_id = \(messageID) AND r.key = \(key) AND u.id > \(after ?? 0)
            ORDER BY u.id LIMIT \(limit)
            """, logger: logger)
        var users: [User] = []
        for try await row in rows.decode(UserRecord.Row.self) {
            users.append(try UserRecord.user(row, links: fileLinks))
        }
        return users
    }

    public func replies(roomID: Int64, messageID: Int64, after: Int64?, limit: Int, viewer: Int64) async throws
        -> [Message]
    {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: MessageColumns.list()) FROM \(unescaped: MessageColumns.source)
            WHERE m.reply_to_id = \(messageID) AND m.chat_room_id = \(roomID) AND m.seq > \(after ?? 0)
            ORDER BY m.seq LIMIT \(limit + 1)
            """, logger: logger
        ).collect()
        return try await messages(from: rows, viewer: viewer)
    }

    public func changes(roomID: Int64, since: Date, after cursor: ChangeCursor?, limit: Int, viewer: Int64)
        async throws -> [(message: Message, cursor: ChangeCursor)]
    {
        // The cursor's time in whole microseconds, as stored: a page ends exactly where it ends.
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: MessageColumns.list()), (extract(epoch FROM x.changed_at) * 1000000)::bigint
            FROM messenger.message_change x
            JOIN messenger.message m ON m.id = x.message_id
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            LEFT JOIN cloud.file f ON f.id = m.file_id
            \(unescaped: MessageColumns.replyJoin)
            WHERE x.chat_room_id = \(roomID) AND x.changed_at >= \(since)
              AND (\(cursor?.changedAtMicros)::bigint IS NULL
                   OR (x.changed_at, x.message_id) > (
                       timestamptz 'epoch' + \(cursor?.changedAtMicros ?? 0) * interval '1 microsecond',
                       \(cursor?.messageID ?? 0)))
            ORDER BY x.changed_at, x.message_id LIMIT \(limit)
            """, logger: logger
        ).collect()
        let micros = try rows.map { try $0.makeRandomAccess()[MessageColumns.count].decode(Int64.self) }
        return zip(try await messages(from: rows, viewer: viewer), micros).map { message, micros in
            (message, ChangeCursor(changedAtMicros: micros, messageID: message.id))
        }
    }
}
