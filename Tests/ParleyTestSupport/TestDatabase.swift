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

    /// Creates an empty database (optionally migrated) and returns its configuration.
    public func makeDatabase(migrated: Bool = false) async throws -> PostgresConfiguration {
        let name = "test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        let admin = PostgresPool(configuration: postgres(database: "postgres"), logger: .quiet)
        try await admin.withRunningClient { pool in
            try await pool.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: .quiet)
        }
        let configuration = postgres(database: name)
        if migrated {
            let migrations = try Migration.load(from: Self.migrationsDirectory)
            try await MigrationRunner(configuration: configuration, migrations: migrations, logger: .quiet).apply()
        }
        return configuration
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
