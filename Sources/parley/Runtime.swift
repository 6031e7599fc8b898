import Foundation
import Logging
import Metrics
import ParleyAPI
import ParleyCore
import ParleyPostgres
import ParleyRuntime
import PostgresNIO
import Prometheus
import Synchronization

/// Process-wide bootstrapping: logging and the metrics registry, each done once.
enum Runtime {
    /// The registry `/metrics` renders; swift-metrics records into it.
    static let metrics = PrometheusCollectorRegistry()
    private static let bootstrapped = Mutex(false)

    /// - Parameter json: one JSON object a line (``JSONLogHandler``) instead of text.
    static func bootstrap(logLevel: Logger.Level, json: Bool) throws {
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = logLevel
                return handler
            }
            var handler = TextLogHandler(label: label)
            handler.logLevel = logLevel
            return handler
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics))
    }

    static func logger(_ label: String) -> Logger { Logger(label: "parley.\(label)") }

    /// Runs `body` against PostgreSQL for a one-shot command, failing clearly instead of
    /// hanging when the server is unreachable or refuses the credentials: the connection is
    /// checked within `connectTimeout`; `body` itself (a long migration, a wait for another
    /// node's migration lock) is not cut off.
    static func withDatabase<Result: Sendable>(
        _ settings: Settings, connectTimeout: Duration = .seconds(30),
        _ body: @escaping @Sendable (PostgresPool) async throws -> Result
    ) async throws -> Result {
        let configuration = try settings.postgres()
        // A one-shot command reports failures itself; the pool's retry chatter would only hide them.
        var poolLogger = logger("postgres")
        poolLogger.logLevel = .critical
        let database = PostgresPool(configuration: configuration, logger: poolLogger)
        do {
            return try await database.withRunningClient { database in
                try await withTimeout(connectTimeout) { try await PostgresProbe(database: database).probe() }
                return try await body(database)
            }
        } catch let error as PSQLError {
            throw CommandFailure(error.operatorDescription)
        } catch is TimeoutError {
            throw CommandFailure(
                "PostgreSQL at \(configuration.host):\(configuration.port) did not answer within \(connectTimeout) "
                    + "(check PARLEY_POSTGRES_* settings)")
        }
    }

    /// Runs `body` with the directory's rules over the configured database (the commands'
    /// side of `/v1/admin/*`).
    static func withDirectory<Result: Sendable>(
        _ settings: Settings, _ body: @escaping @Sendable (DirectoryService) async throws -> Result
    ) async throws -> Result {
        let hasher = BcryptPasswordHasher(cost: try settings.bcryptCost())
        return try await withDatabase(settings) { database in
            try await body(
                DirectoryService(
                    users: PostgresUserRepository(
                        database: database, logger: logger("users"), fileLinks: try settings.fileLinks()),
                    directory: PostgresDirectoryRepository(database: database, logger: logger("directory")),
                    hasher: hasher))
        }
    }

    /// Refuses to run a server process against a schema it was not built for.
    static func verifySchema(_ settings: Settings) async throws {
        let directory = try settings.migrationsDirectory()
        let migrations = try Migration.load(from: directory)
        try await withDatabase(settings) { database in
            try await SchemaCheck(database: database, migrations: migrations, logger: logger("migrate")).verifyCurrent()
        }
    }
}

/// An error a command reports as one line and a failing exit status.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
