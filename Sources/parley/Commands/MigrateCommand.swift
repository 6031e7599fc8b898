import ArgumentParser
import Foundation
import ParleyPostgres

/// `parley migrate up|status`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply or list the database migrations.",
        subcommands: [Up.self, Status.self]
    )

    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply every pending migration in one transaction under an advisory lock.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let settings = try await options.settings()
            let migrations = try Migration.load(from: settings.migrationsDirectory())
            let applied = try await MigrationRunner(
                configuration: try settings.postgres(), migrations: migrations, logger: Runtime.logger("migrate")
            ).apply()
            if applied.isEmpty {
                print("The schema is current (\(migrations.count) migrations applied).")
            } else {
                for migration in applied { print("applied \(migration.version) \(migration.name)") }
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List applied and pending migrations.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let settings = try await options.settings()
            let migrations = try Migration.load(from: settings.migrationsDirectory())
            let statuses = try await MigrationRunner(
                configuration: try settings.postgres(), migrations: migrations, logger: Runtime.logger("migrate")
            ).status()
            for status in statuses {
                print(
                    "\(String(format: "%04d", status.version))  \(status.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))\(status.name)"
                )
            }
            if statuses.contains(where: { $0.state == MigrationRunner.Status.State.modified }) { throw ExitCode(2) }
        }
    }
}
