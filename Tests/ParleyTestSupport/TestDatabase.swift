import Foundation
import Logging
import ParleyPostgres
import PostgresNIO

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
        let name = "test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        let template = migrated ? try await Self.templates.run { try await migratedTemplate() } : nil
        try await create(name, from: template)
        return postgres(database: name)
    }

    /// Runs `body` with a pool of its own on the `postgres` database (a pool runs once).
    private func administering<Result: Sendable>(_ body: @escaping @Sendable (PostgresPool) async throws -> Result)
        async throws -> Result
    {
        try await PostgresPool(configuration: postgres(database: "postgres"), logger: .quiet).withRunningClient(body)
    }

    /// One template per set of migrations (named by their checksums), made by the first caller.
    static let templates = OneAtATime()

    private func migratedTemplate() async throws -> String {
        let migrations = try Migration.load(from: Self.migrationsDirectory)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in migrations.map(\.checksum).joined(separator: ",").utf8 {
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
