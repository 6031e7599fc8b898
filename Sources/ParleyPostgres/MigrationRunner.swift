import Logging
import PostgresNIO

/// Applies `Migrations/` to PostgreSQL and reports what is applied.
///
/// All pending migrations run in one transaction holding an advisory lock, so concurrent
/// runners (several nodes deploying at once) apply each migration exactly once, and a
/// failing migration leaves the schema as it was.
public struct MigrationRunner: Sendable {
    /// A migration's state in the database.
    public struct Status: Sendable, Equatable {
        public enum State: String, Sendable { case applied, pending, modified, unknown }
        public let version: Int
        public let name: String
        public let state: State
    }

    /// Key of the transaction-level advisory lock; any constant shared by all runners.
    static let lockKey: Int64 = 0x7061_726c_6579  // "parley"

    let database: PostgresPool
    let migrations: [Migration]
    let logger: Logger

    public init(database: PostgresPool, migrations: [Migration], logger: Logger) {
        self.database = database
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies every pending migration; returns those applied by this call (empty when current).
    @discardableResult
    public func apply() async throws -> [Migration] {
        do {
            return try await applyPending()
        } catch let error as PostgresTransactionError {
            // Report what went wrong inside (an edited migration, a failing statement).
            throw error.closureError ?? error
        }
    }

    private func applyPending() async throws -> [Migration] {
        try await database.client.pool.withTransaction(logger: logger) { connection in
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS public.parley_schema_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            let applied = try await appliedChecksums(on: connection)
            try verifyUnmodified(applied)
            let pending = migrations.filter { applied[$0.version] == nil }
            for migration in pending {
                logger.info(
                    "applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                for statement in SQLScript.statements(in: migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO public.parley_schema_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(migration.checksum))",
                    logger: logger
                )
            }
            return pending
        }
    }

    /// Every known migration and every applied one, in version order.
    public func status() async throws -> [Status] {
        let applied = try await database.client.withConnection { try await appliedChecksums(on: $0) }
        var statuses = migrations.map { migration in
            let state: Status.State =
                switch applied[migration.version] {
                case nil: .pending
                case migration.checksum: .applied
                default: .modified
                }
            return Status(version: migration.version, name: migration.name, state: state)
        }
        let known = Set(migrations.map(\.version))
        for version in applied.keys where !known.contains(version) {
            statuses.append(Status(version: version, name: "(no file)", state: .unknown))
        }
        return statuses.sorted { $0.version < $1.version }
    }

    /// Throws unless every migration is applied unmodified: `serve` and `worker` call this
    /// at start so they never run against a schema they were not built for.
    public func verifyCurrent() async throws {
        let statuses = try await status()
        if let modified = statuses.first(where: { $0.state == .modified }) {
            throw MigrationError.modified(version: modified.version, name: modified.name)
        }
        let pending = statuses.filter { $0.state == .pending }.map(\.version)
        if !pending.isEmpty { throw MigrationError.pending(pending) }
    }

    private func appliedChecksums(on connection: PostgresConnection) async throws -> [Int: String] {
        let exists =
            try await connection.query(
                "SELECT to_regclass('public.parley_schema_migrations') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        guard exists else { return [:] }
        var applied: [Int: String] = [:]
        let rows = try await connection.query(
            "SELECT version, checksum FROM public.parley_schema_migrations", logger: logger)
        for try await (version, checksum) in rows.decode((Int, String).self) {
            applied[version] = checksum
        }
        return applied
    }

    private func verifyUnmodified(_ applied: [Int: String]) throws {
        for migration in migrations {
            if let checksum = applied[migration.version], checksum != migration.checksum {
                throw MigrationError.modified(version: migration.version, name: migration.name)
            }
        }
    }
}
