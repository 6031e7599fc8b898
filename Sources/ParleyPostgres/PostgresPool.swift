import Logging
import ParleyCore
import PostgresNIO
import ServiceLifecycle

/// Parley's handle on PostgreSQL: a connection pool that runs as a `Service`.
///
/// Repositories take this type; the pool's connections live as long as `run()` does.
public struct PostgresPool: Service {
    /// The primary: every write, and every read not allowed to be stale.
    public let client: BoundedPostgresClient
    public let configuration: PostgresConfiguration
    /// Streaming replicas for reads that may be a little stale; nil: none.
    public let replicas: ReadReplicas?
    let logger: Logger

    public init(configuration: PostgresConfiguration, logger: Logger, replicas: ReadReplicas? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.replicas = replicas
        self.client = BoundedPostgresClient(configuration: configuration, logger: logger)
    }

    /// Where a read that may be a little stale goes: a current replica when the task allows
    /// it (``ParleyCore/ReplicaReads``), else the primary; a read the replica fails goes to
    /// the primary. History, room lists, search, user search and file metadata read here.
    public var reads: StaleReads {
        guard ReplicaReads.allowed, let replicas, let (index, replica) = replicas.pick() else {
            return StaleReads(primary: client, replica: nil)
        }
        return StaleReads(primary: client, replica: (replica, { replicas.skip(index, because: $0) }))
    }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            if let replicas { group.addTask { await replicas.run(primary: client) } }
        }
    }

    /// Runs `body` with the pool running, for commands that do one job and exit
    /// (`parley migrate`, `parley user create`) and for tests.
    public func withRunningClient<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresPool) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                await client.run()
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
