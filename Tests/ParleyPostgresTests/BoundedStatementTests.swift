import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// A statement that never starts answering fails in time, on a pooled connection and on a held one.
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

    @Test func aHeldConnectionsStatementFailsAtItsLimitAndTheConnectionStaysOpen() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            try await pool.client.withConnection { connection in
                let started = ContinuousClock.now
                await #expect(throws: ConnectionLostError.self) {
                    try await connection.whileOpen(within: .milliseconds(300)) {
                        try await connection.query("SELECT pg_sleep(2)", logger: .quiet).collect()
                    }
                }
                #expect(ContinuousClock.now - started < .seconds(1))
                // Unlike a pooled statement's, a held connection is its holder's to close.
                #expect(!connection.isClosed)
            }
        }
    }
}
