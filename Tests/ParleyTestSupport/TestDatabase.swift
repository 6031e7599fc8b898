import Foundation
import Logging
import ParleyPostgres
import PostgresNIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Fresh PostgreSQL databases, one per test, so tests run in parallel without sharing rows.
extension TestServices {
    /// The repository's `Migrations/`.
    public static var migrationsDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Migrations")
    }

    /// Creates an empty database (optionally migrated) and returns its configuration. A migrated
    /// one is a copy of a template migrated once per set of migrations: migrating each test's
    /// database anew took hundreds of statements apiece, and a suite's worth at once kept
    /// PostgreSQL from accepting connections within seconds on two cores.
    public func makeDatabase(migrated: Bool = false) async throws -> PostgresConfiguration {
        try await Self.sweeps.run { [self] in try await sweepOnce() }
        let name =
            "\(Self.ownPrefix)\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        let template = migrated ? try await Self.templates.run { try await migratedTemplate() } : nil
        try await create(name, from: template)
        return postgres(database: name)
    }

    /// This process's databases are named for it, so that a later run can tell those of a test
    /// process that has ended (a suite drops none of its own: each test would have to).
    private static let ownPrefix = "test_p\(getpid())_"
    static let sweeps = OneAtATime()
    private static let swept = Mutex(false)

    /// Drops, once per process, the databases of test processes that have ended: a machine that
    /// runs the suite many times against the same services otherwise fills its disk.
    private func sweepOnce() async throws {
        guard
            Self.swept.withLock({ done in
                defer { done = true }
                return !done
            })
        else { return }
        let names = try await administering { pool in
            try await pool.client.query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_p%'", logger: .quiet
            )
            .all(String.self)
        }
        for name in names {
            let pid = name.dropFirst("test_p".count).prefix { $0.isNumber }
            guard let pid = Int32(pid), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? await administering { pool in
                try await pool.client.query(
                    PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: .quiet)
            }
        }
    }

    /// Runs `body` with a pool of its own on the `postgres` database (a pool runs once).
    private func administering<Result: Sendable>(_ body: @escaping @Sendable (PostgresPool) async throws -> Result)
        async throws -> Result
    {
        try await PostgresPool(configuration: postgres(database: "postgres"), logger: .quiet).withRunningClient(body)
    }

    /// One template per set of migrations (named by their versions and checksums: a migration
    /// renumbered makes a new one), made by the first caller.
    static let templates = OneAtATime()

    private func migratedTemplate() async throws -> String {
        let migrations = try Migration.load(from: Self.migrationsDirectory)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in migrations.map({ "\($0.version):\($0.checksum)" }).joined(separator: ",").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let template = "template_\(String(hash, radix: 16))"
        let exists = try await administering { pool in
            try await pool.client.query("SELECT 1 FROM pg_database WHERE datname = \(template)", logger: .quiet)
                .first(Int32.self) != nil
        }
        guard !exists else { return template }
        // Built under another name and renamed when whole: a run stopped halfway leaves no
        // template that lacks migrations.
        let building = "building_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        try await create(building, from: nil)
        try await MigrationRunner(configuration: postgres(database: building), migrations: migrations, logger: .quiet)
            .apply()
        try await administering { pool in
            try await pool.client.query(
                PostgresQuery(unsafeSQL: "ALTER DATABASE \(building) RENAME TO \(template)"), logger: .quiet)
        }
        return template
    }

    private func create(_ name: String, from template: String?) async throws {
        try await administering { pool in
            try await pool.client.query(
                PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? "")),
                logger: .quiet)
        }
    }
}

extension Logger {
    /// A logger for tests: only errors.
    public static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .error
        return logger
    }
}
