import Foundation
import ParleyRuntime
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyPostgres

/// Single statements run on connections kept leased from the pool (``HeldConnections``), at
/// most half of it, given back when idle, closed or shutting down.
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

    @Test func statementsAfterTheFirstRunOnAHeldConnection() async throws {
        try await pool(maximum: 4).withRunningClient { pool in
            let held = try #require(pool.client.held)
            #expect(held.limit == 2)
            // The first finds none held: it leases from the pool and a holder starts.
            _ = try await backend(pool.client)
            for _ in 0..<50 where held.idleCount == 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 1)
            let first = try await backend(pool.client)
            let second = try await backend(pool.client)
            #expect(first == second)
            // A statement that found none held would have started a second holder.
            #expect(held.count == 1)
            #expect(held.idleCount == 1)
        }
    }

    @Test func atMostHalfThePoolIsHeldAndTransactionsLeaseTheRest() async throws {
        try await pool(maximum: 4).withRunningClient { pool in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { _ = try await pool.client.query("SELECT pg_sleep(0.05)", logger: .quiet).collect() }
                }
                try await group.waitForAll()
            }
            let held = try #require(pool.client.held)
            #expect(held.count <= 2)
            // Both held connections idle, the other half of the pool serves two transactions at once.
            try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<2 {
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
                #expect(pids.count == 2)
            }
        }
    }

    @Test func aHeldConnectionIdleForHalfTheIdleTimeoutGoesBack() async throws {
        try await pool(maximum: 4, idleTimeout: .seconds(1)).withRunningClient { pool in
            let held = try #require(pool.client.held)
            _ = try await backend(pool.client)
            for _ in 0..<50 where held.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 1)
            for _ in 0..<100 where held.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 0, "given back after half a second without work")
        }
    }

    @Test func aTerminatedHeldConnectionIsNotUsedAgain() async throws {
        let admin = try await pool(maximum: 1)
        try await admin.withRunningClient { admin in
            try await pool(maximum: 2).withRunningClient { pool in
                let held = try #require(pool.client.held)
                _ = try await backend(pool.client)
                for _ in 0..<50 where held.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
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

    @Test func thePoolShutsDownWithConnectionsHeld() async throws {
        let database = try await pool(maximum: 4)
        let started = ContinuousClock.now
        try await database.withRunningClient { pool in
            let held = try #require(pool.client.held)
            _ = try await backend(pool.client)
            for _ in 0..<50 where held.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(held.count == 1)
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aPoolWithAKeepAliveQueryHoldsNone() async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.keepAlive = .seconds(30)
        #expect(PostgresPool(configuration: configuration, logger: .quiet).client.held == nil)
        configuration.keepAlive = .zero
        configuration.maximumConnections = 1
        #expect(PostgresPool(configuration: configuration, logger: .quiet).client.held == nil)
    }
}
