import Logging
import PostgresNIO
import Synchronization

extension OutboxRelay {
    /// When the relay vacuums the outbox itself: at most once per ``interval``, after it has
    /// deleted rows since the last time.
    ///
    /// The outbox is a queue: every message's row is inserted and, a moment later, deleted. A
    /// deleted row stays in the table (and its indexes) until a vacuum, and each read of the
    /// next batch steps over all of them. Autovacuum comes only every `autovacuum_naptime`
    /// (a minute by default): at 1,000 messages a second a read then stepped over tens of
    /// thousands of dead rows, and the relay's PostgreSQL time per message grew from one
    /// step of the benchmark to the next (<doc:OutboxVacuum>).
    final class Vacuum: Sendable {
        static let interval: Duration = .seconds(1)
        /// Not the table's truncation: it would take a lock every send's insert waits for.
        static let statement = "VACUUM (SKIP_LOCKED, TRUNCATE false) messenger.outbox"

        private struct State {
            var deleted = false
            var last: ContinuousClock.Instant?
        }
        private let state = Mutex(State())

        /// The relay deleted published rows.
        func deleted() { state.withLock { $0.deleted = true } }

        /// Whether to vacuum now; when it answers yes, it counts as done.
        func isDue(at now: ContinuousClock.Instant) -> Bool {
            state.withLock { state in
                guard state.deleted, state.last.map({ now - $0 >= Self.interval }) ?? true else { return false }
                state = State(deleted: false, last: now)
                return true
            }
        }
    }

    /// Vacuums the outbox when ``Vacuum`` says it is due. A role that does not own the table
    /// gets a warning from PostgreSQL, not an error, and autovacuum still does the work.
    func vacuumIfDue(on connection: PostgresConnection) async throws {
        guard vacuum.isDue(at: .now) else { return }
        _ = try await connection.whileOpen(within: Self.statementLimit) {
            try await connection.query(PostgresQuery(unsafeSQL: Vacuum.statement), logger: logger).collect()
        }
    }
}
