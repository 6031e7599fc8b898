import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Deleting accounts and rooms, and retention, in PostgreSQL. Membership changes go through
/// the room repository's rules (locks, events, the broker's cache).
public struct PostgresErasureRepository: ErasureRepository {
    let rooms: PostgresRoomRepository
    var database: PostgresPool { rooms.database }
    var logger: Logger { rooms.logger }

    public init(rooms: PostgresRoomRepository) {
        self.rooms = rooms
    }

    // MARK: Accounts

    /// What is left of a deleted account's profile: nothing that identifies the person, an
    /// e-mail no one can register (free for a new account), no password, no avatar.
    static let wipedProfile = """
        email = 'deleted-' || id || '@erased.invalid', first_name = 'Deleted', last_name = 'user',
        password_hash = '!', api_key_hash = NULL, is_admin = false, avatar_file_id = NULL,
        updated_at = clock_timestamp()
        """

    public func endAccount(userID: Int64) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            // The e-mail is freed for a new account at once; no password opens this one.
            let ended = try await connection.query(
                """
                UPDATE cloud.user_account SET deleted_at = clock_timestamp(), \(unescaped: Self.wipedProfile)
                WHERE id = \(userID) AND deleted_at IS NULL RETURNING 1
                """, logger: logger
            ).first(Int32.self)
            guard ended != nil else { return false }
            try await connection.query(
                "DELETE FROM notifications.user_push_token WHERE user_account_id = \(userID)", logger: logger)
            // The issuers' users it was are free to sign in again as new accounts.
            try await connection.query(
                "DELETE FROM cloud.user_identity WHERE user_account_id = \(userID)", logger: logger)
            return true
        }
    }

    public func isAccountDeleted(userID: Int64) async throws -> Bool {
        try await database.client.query(
            "SELECT 1 FROM cloud.user_account WHERE id = \(userID) AND deleted_at IS NOT NULL", logger: logger
        ).first(Int32.self) != nil
    }

    public func multipartyRooms(ofDirectMember userID: Int64, limit: Int) async throws -> [Int64] {
        try await database.client.query(
            """
            SELECT m.chat_room_id FROM messenger.chat_room_to_user_account m
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            WHERE m.user_account_id = \(userID) AND c.type = 'multiparty'
            ORDER BY m.chat_room_id LIMIT \(limit)
            """, logger: logger
        ).all(Int64.self)
    }

    public func leaveRemainingRooms(userID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            // Locked as membership changes lock them, in id order: a send in one of them that
            // read the membership before commits before this, one after finds none.
            try await connection.query(
                """
                SELECT 1 FROM messenger.chat_room
                WHERE id IN (SELECT chat_room_id FROM messenger.room_membership WHERE user_account_id = \(userID))
                ORDER BY id FOR UPDATE
                """, logger: logger)
            try await connection.query(
                "DELETE FROM messenger.chat_room_to_user_account WHERE user_account_id = \(userID)", logger: logger)
            try await connection.query(
                "DELETE FROM cloud.user_account_to_user_group WHERE user_account_id = \(userID)", logger: logger)
            try await connection.query(
                "DELETE FROM cloud.user_account_to_role WHERE user_account_id = \(userID)", logger: logger)
        }
    }

    public func liveMessages(sentBy userID: Int64, limit: Int) async throws -> [MessageRef] {
        let rows = try await database.client.query(
            """
            SELECT id, chat_room_id FROM messenger.message
            WHERE sent_by_id = \(userID) AND deleted_at IS NULL ORDER BY id LIMIT \(limit)
            """, logger: logger)
        var found: [MessageRef] = []
        for try await (id, room) in rows.decode((Int64, Int64).self) { found.append(MessageRef(id: id, roomID: room)) }
        return found
    }

    public func reactions(by userID: Int64, limit: Int) async throws -> [ReactionRef] {
        let rows = try await database.client.query(
            """
            SELECT r.message_id, m.chat_room_id, r.key FROM messenger.reaction r
            JOIN messenger.message m ON m.id = r.message_id
            WHERE r.user_account_id = \(userID) ORDER BY r.message_id, r.key LIMIT \(limit)
            """, logger: logger)
        var found: [ReactionRef] = []
        for try await (message, room, key) in rows.decode((Int64, Int64, String).self) {
            found.append(ReactionRef(message: MessageRef(id: message, roomID: room), key: key))
        }
        return found
    }

    public func finishAccountErasure(userID: Int64) async throws -> [Int64] {
        try await database.transaction(logger: logger) { connection in
            // Devices take their sessions, push tokens and MQTT client ids with them.
            for statement: PostgresQuery in [
                "DELETE FROM cloud.device WHERE user_account_id = \(userID)",
                "DELETE FROM cloud.session WHERE user_account_id = \(userID)",
                "DELETE FROM cloud.user_account_mqtt_client_id WHERE user_account_id = \(userID)",
                "DELETE FROM messenger.read_marker WHERE user_account_id = \(userID)",
                "DELETE FROM messenger.room_notification_setting WHERE user_account_id = \(userID)",
                "DELETE FROM messenger.room_hidden WHERE user_account_id = \(userID)",
                "DELETE FROM notifications.quiet_hours WHERE user_account_id = \(userID)",
                "DELETE FROM messenger.user_block WHERE blocker_id = \(userID) OR blocked_id = \(userID)",
                "DELETE FROM messenger.mention WHERE user_account_id = \(userID)",
                "DELETE FROM messenger.reaction WHERE user_account_id = \(userID)",
                "DELETE FROM cloud.data_export WHERE user_account_id = \(userID)",
                """
                UPDATE cloud.user_account
                SET erased_at = coalesce(erased_at, clock_timestamp()), \(unescaped: Self.wipedProfile)
                WHERE id = \(userID) AND deleted_at IS NOT NULL
                """,
                """
                UPDATE messenger.chat_room SET avatar_file_id = NULL
                WHERE avatar_file_id IN (SELECT id FROM cloud.file WHERE uploaded_by_id = \(userID))
                """,
            ] {
                try await connection.query(statement, logger: logger)
            }
            // Their uploads go, whoever's message carries them; a report's hold keeps one.
            return try await connection.query(
                "UPDATE cloud.file SET submitted = false WHERE uploaded_by_id = \(userID) RETURNING id",
                logger: logger
            ).all(Int64.self)
        }
    }

    public func accountsAwaitingErasure(deletedBefore cutoff: Date, limit: Int) async throws -> [Int64] {
        try await database.client.query(
            """
            SELECT id FROM cloud.user_account
            WHERE deleted_at < \(cutoff) AND erased_at IS NULL ORDER BY deleted_at LIMIT \(limit)
            """, logger: logger
        ).all(Int64.self)
    }

    // MARK: Rooms

    public func endRoom(roomID: Int64, by userID: Int64) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            let live = try await connection.query(
                """
                SELECT 1 FROM messenger.chat_room WHERE id = \(roomID) AND deleted_at IS NULL FOR UPDATE
                """, logger: logger
            ).first(Int32.self)
            guard live != nil else { return false }
            let members = try await rooms.readerRoles(roomID: roomID, on: connection).keys.sorted()
            for table in [
                "messenger.chat_room_to_user_account", "messenger.chat_room_to_user_group",
                "messenger.chat_room_to_app_role", "messenger.room_hidden", "messenger.room_notification_setting",
            ] {
                try await connection.query(
                    "DELETE FROM \(unescaped: table) WHERE chat_room_id = \(roomID)", logger: logger)
            }
            try await connection.query(
                "UPDATE messenger.chat_room SET deleted_at = clock_timestamp() WHERE id = \(roomID)", logger: logger)
            let serial = try await rooms.touch(roomID: roomID, on: connection)
            try await Outbox.record(
                .roomDeleted(RoomDeleted(roomId: roomID, byId: userID, serial: serial, memberIds: members)),
                on: connection, logger: logger)
            return true
        }
    }

    public func isRoomDeleted(roomID: Int64) async throws -> Bool {
        try await database.client.query(
            "SELECT 1 FROM messenger.chat_room WHERE id = \(roomID) AND deleted_at IS NOT NULL", logger: logger
        ).first(Int32.self) != nil
    }

    public func purgeMessages(roomID: Int64, createdBefore cutoff: Date?, limit: Int) async throws -> (
        count: Int, releasedFiles: [Int64]
    ) {
        try await database.transaction(logger: logger) { connection in
            let files = try await connection.query(
                """
                WITH doomed AS (
                    SELECT id FROM messenger.message
                    WHERE chat_room_id = \(roomID) AND (\(cutoff)::timestamptz IS NULL OR created_at < \(cutoff))
                    ORDER BY seq LIMIT \(limit)
                ), attached AS (
                    SELECT a.file_id FROM messenger.message_attachment a JOIN doomed ON doomed.id = a.message_id
                ), gone AS (
                    DELETE FROM messenger.message m USING doomed WHERE m.id = doomed.id RETURNING m.seq
                ), unmarked AS (
                    -- A marker naming a purged message goes with it (migration 0032).
                    DELETE FROM messenger.read_marker r USING doomed
                    WHERE r.chat_room_id = \(roomID) AND r.message_id = doomed.id
                ), through AS (
                    UPDATE messenger.chat_room SET purged_seq = greatest(purged_seq, (SELECT max(seq) FROM gone))
                    WHERE id = \(roomID) AND EXISTS (SELECT 1 FROM gone)
                )
                SELECT (SELECT count(*)::bigint FROM gone),
                       coalesce((SELECT array_agg(DISTINCT file_id) FROM attached), '{}')
                """, logger: logger
            ).single((Int64, [Int64]).self)
            guard !files.1.isEmpty else { return (Int(files.0), []) }
            // A statement of its own: it sees the deletion, and a send attaching one of the
            // files elsewhere meanwhile keeps it.
            let released = try await connection.query(
                """
                UPDATE cloud.file f SET submitted = false
                WHERE f.id = ANY(\(files.1))
                  AND NOT EXISTS (SELECT 1 FROM messenger.message_attachment a WHERE a.file_id = f.id)
                RETURNING f.id
                """, logger: logger
            ).all(Int64.self)
            return (Int(files.0), released)
        }
    }

    public func finishRoomErasure(roomID: Int64) async throws -> Bool {
        // The outbox rows of the room would go with it: it waits for the relay to publish them.
        // Then no relay indexes its messages any more: a row the relay wrote while the purge
        // deleted its message (neither saw the other) goes now.
        let state = try await database.client.query(
            """
            WITH gone AS (
                DELETE FROM messenger.chat_room c
                WHERE c.id = \(roomID) AND c.deleted_at IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM messenger.outbox o WHERE o.chat_room_id = c.id)
                  AND NOT EXISTS (SELECT 1 FROM messenger.message m WHERE m.chat_room_id = c.id)
                RETURNING 1
            ), unindexed AS (
                DELETE FROM messenger.message_search WHERE chat_room_id = \(roomID) AND EXISTS (SELECT 1 FROM gone)
            )
            SELECT (SELECT count(*) FROM gone) > 0
                OR NOT EXISTS (SELECT 1 FROM messenger.chat_room WHERE id = \(roomID))
            """, logger: logger
        ).single(Bool.self)
        return state
    }

    public func roomsAwaitingErasure(deletedBefore cutoff: Date, limit: Int) async throws -> [Int64] {
        try await database.client.query(
            "SELECT id FROM messenger.chat_room WHERE deleted_at < \(cutoff) ORDER BY deleted_at LIMIT \(limit)",
            logger: logger
        ).all(Int64.self)
    }

    // MARK: Retention

    public func retentionDays(roomID: Int64) async throws -> Int? {
        try await database.client.query(
            "SELECT retention_days FROM messenger.chat_room WHERE id = \(roomID)", logger: logger
        ).first(Int?.self) ?? nil
    }

    public func setRetentionDays(roomID: Int64, days: Int?) async throws {
        try await database.client.query(
            "UPDATE messenger.chat_room SET retention_days = \(days) WHERE id = \(roomID)", logger: logger)
    }

    public func roomsPastRetention(defaultDays: Int?, now: Date, limit: Int) async throws -> [(
        roomID: Int64, cutoff: Date
    )] {
        // One index probe per room with a retention: (chat_room_id, created_at).
        let rows = try await database.client.query(
            """
            SELECT c.id, \(now)::timestamptz - make_interval(days => coalesce(c.retention_days, \(defaultDays)::integer))
            FROM messenger.chat_room c
            WHERE c.deleted_at IS NULL AND coalesce(c.retention_days, \(defaultDays)::integer) IS NOT NULL
              AND EXISTS (
                  SELECT 1 FROM messenger.message m WHERE m.chat_room_id = c.id
                    AND m.created_at < \(now)::timestamptz - make_interval(days => coalesce(c.retention_days, \(defaultDays)::integer))
              )
            ORDER BY c.id LIMIT \(limit)
            """, logger: logger)
        var found: [(roomID: Int64, cutoff: Date)] = []
        for try await (room, cutoff) in rows.decode((Int64, Date).self) { found.append((room, cutoff)) }
        return found
    }
}
