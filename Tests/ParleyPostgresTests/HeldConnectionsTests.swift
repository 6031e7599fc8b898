import Foundation
import ParleyRuntime
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyPostgres

/// Single statements run on connections kept leased from the pool (``HeldConnections``), at
/// most a quarter of it, given back when idle, closed or shutting down.
struct HeldConnectionsTests {
    private func pool(maximum: Int, idleTimeout: Duration = .seconds(3600)) async throws -> PostgresPool {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.maximumConnections = maximum
        configuration.idleTimeout = idleTimeout
        return PostgresPool(configuration: configuration, logger: .quiet)
    }

    private func backend(_ client: BoundedPostgresClient) async throws -> Int32 {
        try await client.query("SELECT pg_backend_pid()", logger: .quiet).single(Int32.self)
    }

    /// Waits until a holder has its connection (a miss starts one).
    private func heldOne(_ held: HeldConnections) async throws {
        for _ in 0..<100 where held.idleCount == 0 { try await Task.sleep(for: .milliseconds(20)) }
        try #require(held.idleCount == 1)
    }

    @Test func statementsAfterTheFirstRunOnTheHeldConnection() async throws {
        try await pool(maximum: 4).withRunningClient { pool in
            let held = try #require(pool.client.held)
            #expect(held.limit == 1)
            // The first finds none held: it leases from the pool and a holder starts.
            _ = try await backend(pool.client)
            try await heldOne(held)
            let taken = try #require(held.take())
            let heldBackend = try await taken.connection.query("SELECT pg_backend_pid()", logger: .quiet)
                .first(Int32.self)
            held.put(taken)
            #expect(try await backend(pool.client) == heldBackend)
            #expect(try await backend(pool.client) == heldBackend)
            #expect(held.count == 1)
            #expect(held.idleCount == 1, "put back after each statement")
        }
    }

    @Test func atMostAQuarterOfThePoolIsHeldAndTransactionsLeaseTheRest() async throws {
        try await pool(maximum: 8).withRunningClient { pool in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { _ = try await pool.client.query("SELECT pg_sleep(0.05)", logger: .quiet).collect() }
                }
                try await group.waitForAll()
            }
            let held = try #require(pool.client.held)
            #expect(held.limit == 2)
            #expect(held.count <= 2)
            // Four transactions at once on the pool's other six connections.
            try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await withTimeout(.seconds(5)) {
                            try await pool.transaction(logger: .quiet) { connection in
                                try await connection.query("SELECT pg_backend_pid() FROM pg_sleep(0.2)", logger: .quiet)
                                    .first(Int32.self) ?? 0
                            }
                        }
                    }
                }
                var pids: Set<Int32> = []
                for try await pid in group { pids.insert(pid) }
                #expect(pids.count == 4)
            }
        }
    }

    /// Transactions and a statement with its commit's confirmation take the held connection
    /// when it is free, and leave it idle, outside any transaction, for the next statement.
    @Test func transactionsAndCommittedStatementsRunOnAFreeHeldConnection() async throws {
        try await pool(maximum: 4).withRunningClient { pool in
            let held = try #require(pool.client.held)
            _ = try await backend(pool.client)
            try await heldOne(held)
            let heldBackend = try await backend(pool.client)
            let inTransaction = try await pool.transaction(logger: .quiet) { connection in
                try await connection.query("SELECT pg_backend_pid()", logger: .quiet).first(Int32.self)
            }
            #expect(inTransaction == heldBackend)
            #expect(try await pool.committed(BackendStatement(), logger: .quiet) == [heldBackend])
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await pool.transaction(logger: .quiet) { connection -> Int in
                    _ = try? await connection.query("SELECT 1 / 0", logger: .quiet).collect()
                    throw Refused()
                }
            }
            // Rolled back: a statement in the aborted transaction would fail.
            #expect(try await backend(pool.client) == heldBackend)
            #expect(held.count == 1 && held.idleCount == 1, "put back after each")
        }
    }

    @Test func aHeldConnectionIdleForHalfTheIdleTimeoutGoesBack() async throws {
        try await pool(maximum: 4, idleTimeout: .seconds(1)).withRunningClient { pool in
            let held = try #require(pool.client.held)
            _ = try await backend(pool.client)
            try await heldOne(held)
            for _ in 0..<100 where held.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 0, "given back after half a second without work")
        }
    }

    @Test func aTerminatedHeldConnectionIsNotUsedAgain() async throws {
        let admin = try await pool(maximum: 1)
        try await admin.withRunningClient { admin in
            try await pool(maximum: 4).withRunningClient { pool in
                let held = try #require(pool.client.held)
                _ = try await backend(pool.client)
                try await heldOne(held)
                let taken = try #require(held.take())
                let victim = try #require(
                    try await taken.connection.query("SELECT pg_backend_pid()", logger: .quiet).first(Int32.self))
                held.put(taken)
                _ = try await admin.client.query("SELECT pg_terminate_backend(\(victim))", logger: .quiet)
                for _ in 0..<50 where !taken.connection.isClosed { try await Task.sleep(for: .milliseconds(20)) }
                let started = ContinuousClock.now
                let next = try await backend(pool.client.answering(within: .seconds(3)))
                #expect(next != victim)
                #expect(ContinuousClock.now - started < .seconds(1))
            }
        }
    }

    /// A statement that never ends on a connection that closed (PostgresNIO drops what is
    /// written into a closed connection) does not keep its connection held: the sweep gives it back.
    @Test func aClosedConnectionTakenByAStatementThatNeverEndsGoesBack() async throws {
        try await pool(maximum: 4).withRunningClient { pool in
            let held = try #require(pool.client.held)
            _ = try await backend(pool.client)
            try await heldOne(held)
            let taken = try #require(held.take())
            await taken.connection.closeForGood()
            // Never put back: the sweep, every second here, finds it closed.
            for _ in 0..<100 where held.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 0)
            held.put(taken)
            #expect(held.count == 0 && held.idleCount == 0, "a late put does nothing")
        }
    }

    @Test func theHoldersEndWhenThePoolShutsDown() async throws {
        let database = try await pool(maximum: 4)
        let held = try #require(database.client.held)
        try await withTimeout(.seconds(10)) {
            try await database.withRunningClient { pool in
                _ = try await backend(pool.client)
                try await heldOne(held)
                // One taken, as by a statement still running when the pool shuts down.
                _ = try #require(held.take())
            }
        }
        for _ in 0..<100 where held.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(held.count == 0)
    }

    @Test func aPoolWithAKeepAliveQueryOrUnderFourConnectionsHoldsNone() async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.keepAlive = .seconds(30)
        #expect(PostgresPool(configuration: configuration, logger: .quiet).client.held == nil)
        configuration.keepAlive = .zero
        configuration.maximumConnections = 3
        #expect(PostgresPool(configuration: configuration, logger: .quiet).client.held == nil)
    }

    /// A read replica's pool holds connections by the same rule as the primary's.
    @Test func aReplicasStatementsRunOnItsHeldConnection() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        let replicas = ReadReplicas(configurations: [configuration], maxLag: .seconds(5), logger: .quiet)
        let replica = replicas.replicas[0]
        let held = try #require(replica.held)
        #expect(held.limit == configuration.maximumConnections / 4)
        try await withTimeout(.seconds(10)) {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await replica.run() }
                defer { group.cancelAll() }
                _ = try await backend(replica)
                try await heldOne(held)
                #expect(try await backend(replica) == (try await backend(replica)))
            }
        }
        for _ in 0..<100 where held.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(held.count == 0, "given back as its pool stops")
    }
}

private struct BackendStatement: PostgresPreparedStatement {
    static let sql = "SELECT pg_backend_pid()"
    typealias Row = Int32

    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
}
