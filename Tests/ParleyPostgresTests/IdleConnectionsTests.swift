import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// The pool closes a connection only after `idleTimeout` without work: long by default, so a
/// rise in load finds the connections an earlier one opened instead of opening many at once.
struct IdleConnectionsTests {
    @Test func theConfiguredIdleTimeoutClosesConnectionsWithoutWork() async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.maximumConnections = 6
        configuration.idleTimeout = .seconds(2)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            // Only this pool's client backends connect to the fresh database.
            func open() async throws -> Int {
                try await pool.client.query(
                    """
                    SELECT count(*)::integer FROM pg_stat_activity
                    WHERE datname = current_database() AND backend_type = 'client backend'
                      AND application_name = 'parley'
                    """, logger: .quiet
                ).first(Int.self) ?? 0
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { _ = try await pool.client.query("SELECT pg_sleep(0.5)", logger: .quiet).collect() }
                }
                try await group.waitForAll()
            }
            #expect(try await open() >= 4, "four statements at once opened four connections")
            // The probe keeps one busy; the others close two seconds after their work.
            var remaining = Int.max
            for _ in 0..<50 where remaining > 1 {
                try await Task.sleep(for: .milliseconds(200))
                remaining = try await open()
            }
            #expect(remaining == 1)
        }
    }

    /// Off by default: PostgresNIO's pool arms a keep-alive timer each time a connection falls
    /// idle, under load every statement. Set, an idle connection runs its query when due.
    @Test(arguments: [Duration.zero, .seconds(1)])
    func anIdleConnectionRunsTheKeepAliveQueryOnlyWhenOneIsSet(keepAlive: Duration) async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.maximumConnections = 1
        configuration.keepAlive = keepAlive
        let observer = PostgresPool(configuration: configuration, logger: .quiet)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let backend = try #require(
                try await pool.client.query("SELECT pg_backend_pid()", logger: .quiet).first(Int32.self))
            try await Task.sleep(for: .milliseconds(2500))
            try await observer.withRunningClient { observer in
                let last = try await observer.client.query(
                    "SELECT query FROM pg_stat_activity WHERE pid = \(backend)", logger: .quiet
                ).first(String.self)
                #expect(last == (keepAlive == .zero ? "SELECT pg_backend_pid()" : "SELECT 1;"))
            }
        }
    }
}
