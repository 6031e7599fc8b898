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
        let pool = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger)
        self.client = BoundedPostgresClient(
            pool: pool, answerTimeout: configuration.answerTimeout,
            held: Self.heldConnections(of: pool, configuration: configuration))
    }

    /// A quarter of the pool is kept leased for single statements (``HeldConnections``),
    /// each given back after 5 s without work (half the idle timeout when that is shorter), so
    /// that transactions and held connections (the relay's) have the rest, and the pool still
    /// closes what is no longer needed. None with a keep-alive query, which only a connection
    /// left idle in the pool runs, or a pool of fewer than four.
    static func heldConnections(of pool: PostgresClient, configuration: PostgresConfiguration) -> HeldConnections? {
        let limit = configuration.maximumConnections / 4
        guard limit > 0, configuration.keepAlive == .zero else { return nil }
        return HeldConnections(
            pool: pool, limit: limit, retireAfter: min(.seconds(5), configuration.idleTimeout / 2))
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
            group.addTask { await runClient() }
            if let replicas { group.addTask { await replicas.run(primary: client) } }
        }
    }

    /// Runs the pool; the held connections go back to it as it shuts down, so that their
    /// holders end.
    private func runClient() async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await client.pool.run()
            } onGracefulShutdown: {
                client.held?.shutDown()
            }
        } onCancel: {
            client.held?.shutDown()
        }
        client.held?.shutDown()
    }

    /// Runs `body` with the pool running, for commands that do one job and exit
    /// (`parley migrate`, `parley user create`) and for tests.
    public func withRunningClient<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresPool) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                await runClient()
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
