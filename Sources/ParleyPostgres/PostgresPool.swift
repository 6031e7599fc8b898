import Logging
import ParleyCore
import PostgresNIO
import ServiceLifecycle

/// Parley's handle on PostgreSQL: a connection pool that runs as a `Service`.
///
/// Repositories take this type; the pool's connections live as long as `run()` does.
public struct PostgresPool: Service {
    public let client: BoundedPostgresClient
    public let configuration: PostgresConfiguration
    let logger: Logger

    public init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.client = BoundedPostgresClient(
            pool: PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger),
            answerTimeout: configuration.answerTimeout)
    }

    public func run() async throws {
        await client.pool.run()
    }

    /// Runs `body` with the pool running, for commands that do one job and exit
    /// (`parley migrate`, `parley user create`) and for tests.
    public func withRunningClient<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresPool) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                await client.pool.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(self)
        }
    }
}

/// Readiness probe: PostgreSQL answers a query.
public struct PostgresProbe: DependencyProbe {
    public let name = "postgres"
    let database: PostgresPool

    public init(database: PostgresPool) { self.database = database }

    public func probe() async throws {
        _ = try await database.client.query("SELECT 1", logger: database.logger).collect()
    }
}
