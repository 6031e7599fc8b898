import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// A statement run alone answers only once its commit is over: the ingest acknowledges the
/// sends it stored on that answer. A deferred trigger runs at the commit, after the rows and
/// `CommandComplete` were written: PostgreSQL holds its answer until the `Sync` unless a
/// notice flushes it, as this trigger's does. It then takes 300 ms, and refuses a negative
/// number.
struct CommittedStatementTests {
    @Test func aStatementIsAnsweredAfterItsCommit() async throws {
        try await withCommitTrigger { pool in
            // From another connection, open before: the row is committed, not only inserted.
            let other = PostgresPool(configuration: pool.configuration, logger: .quiet)
            let seen = try await other.withRunningClient { other in
                _ = try await count(on: other)
                let rows = try await pool.committed(InsertNumber(number: 1), logger: .quiet)
                #expect(rows == [1])
                return try await count(on: other)
            }
            #expect(seen == 1)
        }
    }

    @Test func aCommitThatFailsFailsTheStatement() async throws {
        try await withCommitTrigger { pool in
            await #expect(throws: (any Error).self) {
                _ = try await pool.committed(InsertNumber(number: -1), logger: .quiet)
            }
            // The pool goes on, and nothing was stored.
            let stored = try await count(on: pool)
            #expect(stored == 0)
            let next = try await pool.committed(InsertNumber(number: 2), logger: .quiet)
            #expect(next == [2])
        }
    }

    private func withCommitTrigger(_ body: @escaping @Sendable (PostgresPool) async throws -> Void) async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            try await pool.client.query("CREATE TABLE numbers (number integer NOT NULL)", logger: .quiet)
            try await pool.client.query(
                """
                CREATE FUNCTION check_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    RAISE NOTICE 'checking at commit';
                    PERFORM pg_sleep(0.3);
                    IF NEW.number < 0 THEN RAISE EXCEPTION 'refused at commit'; END IF;
                    RETURN NULL;
                END $$
                """, logger: .quiet)
            try await pool.client.query(
                """
                CREATE CONSTRAINT TRIGGER checked_at_commit AFTER INSERT ON numbers
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION check_at_commit()
                """, logger: .quiet)
            try await body(pool)
        }
    }

    private func count(on pool: PostgresPool) async throws -> Int? {
        try await pool.client.query("SELECT count(*)::integer FROM numbers", logger: .quiet).first(Int.self)
    }
}

private struct InsertNumber: PostgresPreparedStatement {
    static let sql = "INSERT INTO numbers (number) VALUES ($1) RETURNING number"
    typealias Row = Int
    let number: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(number)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}
