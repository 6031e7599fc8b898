/// What the database records of applied migrations (`public.parley_schema_migrations`), and
/// what it says of this build's migration files: one rule for `parley migrate` (libpq) and for
/// the start-up check of `serve` and `worker` (PostgresNIO).
public struct SchemaState: Sendable {
    /// A migration's state in the database.
    public struct Status: Sendable, Equatable {
        public enum State: String, Sendable { case applied, pending, modified, unknown }
        public let version: Int
        public let name: String
        public let state: State
    }

    static let table = "public.parley_schema_migrations"
    static let tableExists = "SELECT to_regclass('\(table)') IS NOT NULL"
    static let appliedQuery = "SELECT version, checksum FROM \(table)"

    /// Applied versions and the checksums recorded when they were applied.
    let applied: [Int: String]

    /// Every known migration and every applied one, in version order.
    public func statuses(of migrations: [Migration]) -> [Status] {
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

    /// Throws when an applied migration's file was edited since.
    func verifyUnmodified(_ migrations: [Migration]) throws {
        if let modified = statuses(of: migrations).first(where: { $0.state == .modified }) {
            throw MigrationError.modified(version: modified.version, name: modified.name)
        }
    }

    /// Throws unless every migration is applied unmodified.
    func verifyCurrent(_ migrations: [Migration]) throws {
        try verifyUnmodified(migrations)
        let pending = statuses(of: migrations).filter { $0.state == .pending }.map(\.version)
        if !pending.isEmpty { throw MigrationError.pending(pending) }
    }
}
