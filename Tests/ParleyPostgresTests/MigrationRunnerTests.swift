import Foundation
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

struct MigrationRunnerTests {
    let migrations = try! Migration.load(from: TestServices.migrationsDirectory)

    func withPool<Result: Sendable>(
        migrated: Bool = false, _ body: @escaping @Sendable (PostgresPool) async throws -> Result
    ) async throws -> Result {
        let configuration = try await TestServices.shared().makeDatabase(migrated: migrated)
        return try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient(body)
    }

    func runner(_ pool: PostgresPool, _ migrations: [Migration]) -> MigrationRunner {
        MigrationRunner(database: pool, migrations: migrations, logger: .quiet)
    }

    @Test func theRepositoryMigrationsLoadInOrder() {
        #expect(migrations.map(\.version) == Array(1...migrations.count))
        #expect(migrations.allSatisfy { $0.checksum.count == 64 })
    }

    @Test func appliesToAnEmptyDatabaseAndASecondRunDoesNothing() async throws {
        try await withPool { pool in
            let runner = runner(pool, migrations)
            #expect(try await runner.status().allSatisfy { $0.state == .pending })
            let all = migrations.map(\.version)
            await #expect(throws: MigrationError.pending(all)) { try await runner.verifyCurrent() }

            let applied = try await runner.apply()
            #expect(applied.map(\.version) == all)
            #expect(try await runner.apply().isEmpty)
            #expect(try await runner.status().allSatisfy { $0.state == .applied })
            try await runner.verifyCurrent()
        }
    }

    @Test func concurrentRunnersApplyEachMigrationOnce() async throws {
        try await withPool { pool in
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await runner(pool, migrations).apply().count } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counts.reduce(0, +) == migrations.count)
            #expect(counts.filter { $0 == migrations.count }.count == 1)
        }
    }

    @Test func anEditedAppliedMigrationIsRefused() async throws {
        try await withPool { pool in
            try await runner(pool, migrations).apply()
            var edited = migrations
            edited[1] = Migration(version: 2, name: edited[1].name, sql: edited[1].sql + "\n-- edited\n")
            let runner = runner(pool, edited)
            await #expect(throws: MigrationError.modified(version: 2, name: "notifications")) {
                try await runner.apply()
            }
            await #expect(throws: MigrationError.modified(version: 2, name: "notifications")) {
                try await runner.verifyCurrent()
            }
            #expect(try await runner.status()[1].state == .modified)
        }
    }

    @Test func aNewMigrationMakesTheSchemaStaleUntilApplied() async throws {
        try await withPool { pool in
            try await runner(pool, migrations).apply()
            let version = migrations.count + 1
            let next =
                migrations + [Migration(version: version, name: "extra", sql: "CREATE TABLE cloud.extra (id int);")]
            await #expect(throws: MigrationError.pending([version])) { try await runner(pool, next).verifyCurrent() }
            #expect(try await runner(pool, next).apply().map(\.version) == [version])
            try await runner(pool, next).verifyCurrent()
        }
    }

    @Test func aFailingMigrationLeavesTheSchemaAsItWas() async throws {
        try await withPool { pool in
            try await runner(pool, migrations).apply()
            let broken =
                migrations + [
                    Migration(version: migrations.count + 1, name: "good", sql: "CREATE TABLE cloud.good (id int);"),
                    Migration(
                        version: migrations.count + 2, name: "bad",
                        sql: "CREATE TABLE cloud.half (id int); SELECT no_such_column;"),
                ]
            await #expect(throws: (any Error).self) { try await runner(pool, broken).apply() }
            let statuses = try await runner(pool, broken).status()
            #expect(statuses.suffix(2).map(\.state) == [.pending, .pending])
            let exists = try await pool.client.query(
                "SELECT to_regclass('cloud.good') IS NOT NULL OR to_regclass('cloud.half') IS NOT NULL", logger: .quiet
            ).collect().first?.decode(Bool.self)
            #expect(exists == false)
        }
    }

    @Test func misnamedMigrationFilesAreAnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 1;".write(to: directory.appendingPathComponent("1_short.sql"), atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.badFileName("1_short.sql")) { try Migration.load(from: directory) }
    }
}
