import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// A statement that never starts answering fails in time, and the pool goes on serving.
struct BoundedStatementTests {
    @Test func aStatementThatDoesNotAnswerInTimeFailsAndThePoolGoesOn() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            _ = try await pool.client.query("SELECT 1", logger: .quiet).collect()
            let started = ContinuousClock.now
            await #expect(throws: ConnectionLostError.self) {
                try await pool.client.answering(within: .milliseconds(300)).query("SELECT pg_sleep(3)", logger: .quiet)
                    .collect()
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            let one = try await pool.client.query("SELECT 1", logger: .quiet).first(Int.self)
            #expect(one == 1)
        }
    }
}
