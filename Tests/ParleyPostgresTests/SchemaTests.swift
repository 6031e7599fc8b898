import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// The schema of the source design, checked in the migrated database itself.
struct SchemaTests {
    static let expectedTables = [
        "cloud.user_account", "cloud.app", "cloud.role", "cloud.user_account_to_role", "cloud.user_group",
        "cloud.user_account_to_user_group", "cloud.file", "cloud.user_account_mqtt_client_id", "cloud.session",
        "cloud.spent_refresh_token", "cloud.device", "notifications.user_push_token", "messenger.chat_room",
        "messenger.message", "messenger.chat_room_to_user_account", "messenger.chat_room_to_user_group",
        "messenger.chat_room_to_app_role", "messenger.read_marker", "cloud.user_identity",
    ]

    func withMigratedPool(_ body: @escaping @Sendable (PostgresPool) async throws -> Void) async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient(body)
    }

    @Test func everyTableOfTheDesignExists() async throws {
        try await withMigratedPool { pool in
            let rows = try await pool.client.query(
                """
                SELECT table_schema || '.' || table_name FROM information_schema.tables
                WHERE table_schema IN ('cloud', 'notifications', 'messenger')
                """, logger: .quiet)
            var tables: Set<String> = []
            for try await name in rows.decode(String.self) { tables.insert(name) }
            #expect(Set(Self.expectedTables).subtracting(tables).isEmpty)
        }
    }

    @Test func everyForeignKeyIsIndexed() async throws {
        try await withMigratedPool { pool in
            // Foreign keys whose columns are not the leading columns of some index.
            let rows = try await pool.client.query(
                """
                SELECT c.conrelid::regclass::text || ' ' || c.conname
                FROM pg_constraint c
                WHERE c.contype = 'f'
                  AND c.connamespace::regnamespace::text IN ('cloud', 'notifications', 'messenger')
                  AND NOT EXISTS (
                    SELECT 1 FROM pg_index i
                    WHERE i.indrelid = c.conrelid
                      AND (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] @> c.conkey
                  )
                """, logger: .quiet)
            var unindexed: [String] = []
            for try await name in rows.decode(String.self) { unindexed.append(name) }
            #expect(unindexed == [])
        }
    }

    /// The indexes of `table` over any of `columns`, and its foreign keys on them: with any of
    /// them, an update moving those columns writes an entry into every index of the table (and
    /// checks the key) instead of moving the row in place on its page.
    static func inPlaceBlockers(of table: String, moving columns: [String], in pool: PostgresPool) async throws
        -> [String]
    {
        let rows = try await pool.client.query(
            """
            SELECT indexrelid::regclass::text FROM pg_index
            WHERE indrelid = \(table)::regclass
              AND pg_get_indexdef(indexrelid) ~ ('\\m(' || array_to_string(\(columns)::text[], '|') || ')\\M')
            UNION ALL
            SELECT conname FROM pg_constraint
            WHERE conrelid = \(table)::regclass AND contype = 'f'
              AND conkey && ARRAY(
                SELECT attnum FROM pg_attribute WHERE attrelid = \(table)::regclass AND attname = ANY(\(columns)))
            """, logger: .quiet)
        var blockers: [String] = []
        for try await name in rows.decode(String.self) { blockers.append(name) }
        return blockers
    }

    @Test func aNewMessageUpdatesItsRoomWithoutTouchingAnIndex() async throws {
        try await withMigratedPool { pool in
            let blockers = try await Self.inPlaceBlockers(
                of: "messenger.chat_room", moving: ["last_seq", "last_message_at", "updated_at"], in: pool)
            #expect(blockers == [])
        }
    }

    /// PostgreSQL evaluates every CHECK constraint of a table on every update: a new message
    /// updates its room, so none of the room's may run a regular expression. The uid's rule is
    /// its domain's (migration 0034), checked where a uid is written.
    @Test func aNewMessageUpdatesItsRoomWithoutARegularExpression() async throws {
        try await withMigratedPool { pool in
            let checks = try await pool.client.query(
                """
                SELECT conname FROM pg_constraint
                WHERE conrelid = 'messenger.chat_room'::regclass AND contype = 'c'
                  AND pg_get_constraintdef(oid) LIKE '%~%'
                """, logger: .quiet
            ).all(String.self)
            #expect(checks == [])

            func createRoom(uid: String) async throws {
                try await pool.client.query(
                    """
                    INSERT INTO messenger.chat_room (uid, type, topic) VALUES (\(uid), 'multiparty', \("chat-room/" + uid))
                    """, logger: .quiet)
            }
            try await createRoom(uid: "abcdefghijklmnop-_0123")
            for refused in ["short", "sixteen chars!!!", String(repeating: "a", count: 65), "abcdefghijklmnop\n"] {
                do {
                    try await createRoom(uid: refused)
                    Issue.record("a room with uid \(refused.debugDescription) was stored")
                } catch let error as PSQLError {
                    #expect(error.sqlState == .checkViolation, "\(refused.debugDescription): \(error.sqlState as Any)")
                }
            }
            await #expect(throws: PSQLError.self) {
                try await pool.client.query("UPDATE messenger.chat_room SET uid = 'short'", logger: .quiet)
            }
            // The rooms' uids still read as text.
            let uids = try await pool.client.query("SELECT uid FROM messenger.chat_room", logger: .quiet).all(
                String.self)
            #expect(uids == ["abcdefghijklmnop-_0123"])
        }
    }

    @Test func aNewMessageMovesItsSendersReadMarkerWithoutTouchingAnIndex() async throws {
        try await withMigratedPool { pool in
            let blockers = try await Self.inPlaceBlockers(
                of: "messenger.read_marker", moving: ["message_id", "seq", "updated_at"], in: pool)
            #expect(blockers == [])
            // The query finds what is there: the user's column is in two indexes and a foreign key.
            let userColumn = try await Self.inPlaceBlockers(
                of: "messenger.read_marker", moving: ["user_account_id"], in: pool)
            #expect(userColumn.count == 3 && userColumn.contains("read_marker_user_account_id_fkey"), "\(userColumn)")
        }
    }

    /// The words of a published message are computed as one expression in the relay's
    /// statement, and appended to the word index's pending list rather than inserted entry by
    /// entry (migration 0033): a search-word function PostgreSQL cannot inline runs through the
    /// SQL-function executor for every row.
    @Test func publishedWordsAreComputedInlineAndIndexedThroughThePendingList() async throws {
        try await withMigratedPool { pool in
            let rows = try await pool.client.query(
                "EXPLAIN VERBOSE SELECT messenger.search_words(content) FROM messenger.message", logger: .quiet)
            var plan = ""
            for try await line in rows.decode(String.self) { plan += line + "\n" }
            #expect(plan.contains("to_tsvector("), "the body in the plan: \(plan)")
            #expect(!plan.contains("search_words(") && !plan.contains("search_text("), "\(plan)")

            let options = try await pool.client.query(
                "SELECT reloptions FROM pg_class WHERE oid = 'messenger.message_search_words_idx'::regclass",
                logger: .quiet
            ).all([String].self)
            #expect(options == [["fastupdate=on", "gin_pending_list_limit=256"]])
        }
    }

    @Test func theMessengerRolesAreSeededInRankOrder() async throws {
        try await withMigratedPool { pool in
            let rows = try await pool.client.query(
                """
                SELECT role.code, role.rank FROM cloud.role JOIN cloud.app ON app.id = role.app_id
                WHERE app.code = 'messenger' ORDER BY role.rank
                """, logger: .quiet)
            var roles: [String] = []
            for try await (code, _) in rows.decode((String, Int).self) { roles.append(code) }
            #expect(roles == ["reader", "writer", "admin"])
        }
    }

    @Test func aTwoPartyPairCanExistOnlyOnce() async throws {
        try await withMigratedPool { pool in
            let insert: PostgresQuery = """
                INSERT INTO messenger.chat_room (uid, type, topic, twoparty_low_user_id, twoparty_high_user_id)
                SELECT md5(random()::text), 'twoparty', 'chat-room/' || md5(random()::text), a.id, b.id
                FROM cloud.user_account a, cloud.user_account b WHERE a.email = 'a@x.io' AND b.email = 'b@x.io'
                """
            try await pool.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                VALUES ('a@x.io', 'A', 'A', 'x'), ('b@x.io', 'B', 'B', 'x')
                """, logger: .quiet)
            try await pool.client.query(insert, logger: .quiet)
            await #expect(throws: PSQLError.self) { try await pool.client.query(insert, logger: .quiet) }
        }
    }
}
