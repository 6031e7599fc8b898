import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// A process keeps its minimum of connections open with nothing to do, so a rise in load
/// finds them ready instead of opening many at once.
struct IdleConnectionsTests {
    @Test func thePoolOpensItsMinimumWithoutDemand() async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.maximumConnections = 6
        configuration.minimumConnections = 4
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            // Only this pool connects to the fresh database; one query at a time needs one.
            var open = 0
            for _ in 0..<100 {
                open =
                    try await pool.client.query(
                        "SELECT count(*)::integer FROM pg_stat_activity WHERE datname = current_database()",
                        logger: .quiet
                    ).first(Int.self) ?? 0
                if open >= 4 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(open == 4)
        }
    }

    @Test func theMinimumNeverExceedsTheMaximum() {
        let configuration = PostgresConfiguration(maximumConnections: 3, minimumConnections: 10)
        #expect(configuration.minimumConnections == 3)
    }
}
