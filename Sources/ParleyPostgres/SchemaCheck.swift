import Logging
import PostgresNIO

/// The start-up check of `serve` and `worker` (and `parley doctor`): refuses to run against a
/// schema this build was not made for. It reads one small table through a PostgresNIO pool
/// of its own, closed after the check, so a server process holds no libpq connection and no
/// thread for one;
/// applying migrations is `MigrationRunner`'s, through libpq.
public struct SchemaCheck: Sendable {
    let database: PostgresPool
    let migrations: [Migration]
    let logger: Logger

    public init(database: PostgresPool, migrations: [Migration], logger: Logger) {
        self.database = database
        self.migrations = migrations
        self.logger = logger
    }

    /// Throws unless every migration is applied unmodified.
    public func verifyCurrent() async throws {
        try await state().verifyCurrent(migrations)
    }

    public func status() async throws -> [SchemaState.Status] {
        try await state().statuses(of: migrations)
    }

    private func state() async throws -> SchemaState {
        try await database.client.withConnection { connection in
            let exists =
                try await connection.query(PostgresQuery(unsafeSQL: SchemaState.tableExists), logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            guard exists else { return SchemaState(applied: [:]) }
            var applied: [Int: String] = [:]
            let rows = try await connection.query(PostgresQuery(unsafeSQL: SchemaState.appliedQuery), logger: logger)
            for try await (version, checksum) in rows.decode((Int, String).self) { applied[version] = checksum }
            return SchemaState(applied: applied)
        }
    }
}
