import Foundation
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// `parley migrate` through libpq, and the start-up check through PostgresNIO, against the
/// real PostgreSQL.
struct MigrationRunnerTests {
    let migrations = try! Migration.load(from: TestServices.migrationsDirectory)

    /// A fresh database: its configuration (what the runner connects with) and a running pool.
    func withDatabase<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConfiguration, PostgresPool) async throws -> Result
    ) async throws -> Result {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        return try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            try await body(configuration, pool)
        }
    }

    func runner(_ configuration: PostgresConfiguration, _ migrations: [Migration]) -> MigrationRunner {
        MigrationRunner(configuration: configuration, migrations: migrations, logger: .quiet)
    }

    func check(_ pool: PostgresPool, _ migrations: [Migration]) -> SchemaCheck {
        SchemaCheck(database: pool, migrations: migrations, logger: .quiet)
    }

    @Test func theRepositoryMigrationsLoadInOrder() {
        #expect(migrations.map(\.version) == Array(1...migrations.count))
        #expect(migrations.allSatisfy { $0.checksum.count == 64 })
        #expect(migrations[0].fileName == "0001_\(migrations[0].name).sql")
    }

    @Test func appliesToAnEmptyDatabaseAndASecondRunDoesNothing() async throws {
        try await withDatabase { configuration, pool in
            let runner = runner(configuration, migrations)
            #expect(try await runner.status().allSatisfy { $0.state == .pending })
            let all = migrations.map(\.version)
            await #expect(throws: MigrationError.pending(all)) { try await check(pool, migrations).verifyCurrent() }

            let applied = try await runner.apply()
            #expect(applied.map(\.version) == all)
            #expect(try await runner.apply().isEmpty)
            #expect(try await runner.status().allSatisfy { $0.state == .applied })
            #expect(try await check(pool, migrations).status() == runner.status())
            try await check(pool, migrations).verifyCurrent()
        }
    }

    @Test func concurrentRunnersApplyEachMigrationOnce() async throws {
        try await withDatabase { configuration, _ in
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await runner(configuration, migrations).apply().count } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counts.reduce(0, +) == migrations.count)
            #expect(counts.filter { $0 == migrations.count }.count == 1)
        }
    }

    @Test func anEditedAppliedMigrationIsRefused() async throws {
        try await withDatabase { configuration, pool in
            try await runner(configuration, migrations).apply()
            var edited = migrations
            edited[1] = Migration(version: 2, name: edited[1].name, sql: edited[1].sql + "\n-- edited\n")
            let runner = runner(configuration, edited)
            await #expect(throws: MigrationError.modified(version: 2, name: "notifications")) {
                try await runner.apply()
            }
            await #expect(throws: MigrationError.modified(version: 2, name: "notifications")) {
                try await check(pool, edited).verifyCurrent()
            }
            #expect(try await runner.status()[1].state == .modified)
        }
    }

    @Test func aNewMigrationMakesTheSchemaStaleUntilApplied() async throws {
        try await withDatabase { configuration, pool in
            try await runner(configuration, migrations).apply()
            let version = migrations.count + 1
            let next =
                migrations + [Migration(version: version, name: "extra", sql: "CREATE TABLE cloud.extra (id int);")]
            await #expect(throws: MigrationError.pending([version])) { try await check(pool, next).verifyCurrent() }
            #expect(try await runner(configuration, next).apply().map(\.version) == [version])
            try await check(pool, next).verifyCurrent()
        }
    }

    /// What a hand-written splitter got wrong is psql's business now: the file goes whole.
    @Test func aMigrationIsRunAsPsqlRunsIt() async throws {
        try await withDatabase { configuration, pool in
            let sql = """
                -- a comment; with a semicolon
                CREATE TABLE public.script_test (note text); /* and another; here */
                CREATE FUNCTION public.script_twice(n int) RETURNS int LANGUAGE plpgsql AS $body$
                BEGIN
                    -- inside the body; still one statement
                    RETURN n * 2;
                END;
                $body$;
                INSERT INTO public.script_test VALUES ('a -- not a comment; nor the end');
                DO $$ BEGIN INSERT INTO public.script_test VALUES ('from a DO block;'); END $$;
                """
            let extra = Migration(version: migrations.count + 1, name: "script", sql: sql)
            try await runner(configuration, migrations + [extra]).apply()
            let notes = try await pool.client.query(
                "SELECT note FROM public.script_test ORDER BY note", logger: .quiet
            ).all(String.self)
            #expect(notes == ["a -- not a comment; nor the end", "from a DO block;"])
            let twice = try await pool.client.query("SELECT public.script_twice(21)", logger: .quiet).first(Int.self)
            #expect(twice == 42)
        }
    }

    @Test func aFailingMigrationNamesItsFileAndLineAndLeavesTheSchemaAsItWas() async throws {
        try await withDatabase { configuration, pool in
            try await runner(configuration, migrations).apply()
            let good = Migration(version: migrations.count + 1, name: "good", sql: "CREATE TABLE cloud.good (id int);")
            let bad = Migration(
                version: migrations.count + 2, name: "bad",
                sql: "CREATE TABLE cloud.half (id int);\n\nSELEC 1;\nCREATE TABLE cloud.after (id int);\n")
            let broken = migrations + [good, bad]
            do {
                try await runner(configuration, broken).apply()
                Issue.record("a broken migration was applied")
            } catch let MigrationError.failed(file, line, error) {
                #expect(file == bad.fileName)
                #expect(line == 3)
                #expect(error.sqlState == "42601")
                #expect(error.message.contains("SELEC"))
                let text = "\(MigrationError.failed(file: file, line: line, error))"
                #expect(text.hasPrefix("\(bad.fileName):3: ERROR:  syntax error"))
                #expect(text.contains("SQLSTATE 42601"))
            }
            let statuses = try await runner(configuration, broken).status()
            #expect(statuses.suffix(2).map(\.state) == [.pending, .pending])
            let exists = try await pool.client.query(
                """
                SELECT to_regclass('cloud.good') IS NOT NULL OR to_regclass('cloud.half') IS NOT NULL
                    OR to_regclass('cloud.after') IS NOT NULL
                """, logger: .quiet
            ).first(Bool.self)
            #expect(exists == false)
        }
    }

    /// A migration may not end the run's transaction: the run stops and says so.
    @Test func aMigrationThatCommitsIsRefused() async throws {
        try await withDatabase { configuration, _ in
            let committing = Migration(
                version: migrations.count + 1, name: "commits", sql: "CREATE TABLE cloud.early (id int);\nCOMMIT;\n")
            await #expect(throws: MigrationError.endedTransaction(file: committing.fileName)) {
                try await runner(configuration, migrations + [committing]).apply()
            }
            let last = try await runner(configuration, migrations + [committing]).status().last
            #expect(last?.state == .pending)
        }
    }

    /// The password reaches libpq alone: a refused login says who and where, never with what.
    @Test func aRefusedConnectionDoesNotShowThePassword() async throws {
        var configuration = try await TestServices.shared().makeDatabase(migrated: false)
        configuration.password = "not-the-password-\(UUID().uuidString)"
        do {
            _ = try await runner(configuration, migrations).status()
            Issue.record("a wrong password connected")
        } catch {
            #expect("\(error)".contains("password authentication failed"))
            #expect(!"\(error)".contains(configuration.password!))
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
