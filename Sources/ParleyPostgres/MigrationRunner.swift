import Logging

/// Applies `Migrations/` to PostgreSQL, and lists what is applied, through libpq: each pending
/// file is sent whole in one simple-protocol query (`PQexec`) and split by PostgreSQL's own
/// parser, so dollar-quoted bodies, `DO` blocks and comments anywhere need no care, and a file
/// costs one round trip. Not in a migration: what cannot run in a transaction (`CREATE INDEX
/// CONCURRENTLY`, `VACUUM`), `BEGIN`/`COMMIT`/`ROLLBACK` (refused: they would end the run's
/// transaction), `COPY … FROM stdin`, and psql's own `\` commands and variables.
///
/// All pending migrations run in one transaction holding an advisory lock, so concurrent
/// runners (several nodes deploying at once) apply each migration exactly once, and a failing
/// migration leaves the schema as it was.
public struct MigrationRunner: Sendable {
    public typealias Status = SchemaState.Status

    /// Key of the transaction-level advisory lock; any constant shared by all runners.
    static let lockKey: Int64 = 0x7061_726c_6579  // "parley"

    let configuration: PostgresConfiguration
    let migrations: [Migration]
    let logger: Logger

    public init(configuration: PostgresConfiguration, migrations: [Migration], logger: Logger) {
        self.configuration = configuration
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies every pending migration; returns those applied by this call (empty when current).
    @discardableResult
    public func apply() async throws -> [Migration] {
        try await withConnection { connection in
            try await connection.execute("BEGIN")
            try await connection.execute("SELECT pg_advisory_xact_lock(\(Self.lockKey))")
            try await connection.execute(
                """
                CREATE TABLE IF NOT EXISTS \(SchemaState.table) (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let state = try await Self.state(on: connection)
            try state.verifyUnmodified(migrations)
            let pending = migrations.filter { state.applied[$0.version] == nil }
            for migration in pending {
                logger.info(
                    "applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                do {
                    try await connection.execute(migration.sql)
                } catch let error as LibpqError {
                    throw MigrationError.failed(file: migration.fileName, line: error.line(in: migration.sql), error)
                }
                guard try await connection.inTransaction() else {
                    throw MigrationError.endedTransaction(file: migration.fileName)
                }
                try await connection.execute(
                    "INSERT INTO \(SchemaState.table) (version, name, checksum) VALUES ($1, $2, $3)",
                    parameters: [String(migration.version), migration.name, migration.checksum])
            }
            try await connection.execute("COMMIT")
            return pending
        }
    }

    /// Every known migration and every applied one, in version order.
    public func status() async throws -> [Status] {
        try await withConnection { try await Self.state(on: $0).statuses(of: migrations) }
    }

    /// Runs `body` on a connection of its own, closed after it (which rolls back what `body`
    /// left uncommitted, a failed migration's transaction included).
    private func withConnection<Value: Sendable>(_ body: (LibpqConnection) async throws -> Value) async throws
        -> Value
    {
        let connection = try await LibpqConnection.connect(configuration, applicationName: "parley migrate")
        do {
            let value = try await body(connection)
            await connection.close()
            return value
        } catch {
            await connection.close()
            throw error
        }
    }

    private static func state(on connection: LibpqConnection) async throws -> SchemaState {
        guard try await connection.execute(SchemaState.tableExists).first?.first == "t" else {
            return SchemaState(applied: [:])
        }
        var applied: [Int: String] = [:]
        for row in try await connection.execute(SchemaState.appliedQuery) {
            guard row.count == 2, let version = row[0].flatMap({ Int($0) }), let checksum = row[1] else { continue }
            applied[version] = checksum
        }
        return SchemaState(applied: applied)
    }
}
