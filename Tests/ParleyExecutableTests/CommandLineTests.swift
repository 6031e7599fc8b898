import Foundation
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct CommandLineTests {
    func command() async throws -> ParleyCommand {
        let services = try TestServices.shared()
        return ParleyCommand(database: try await services.makeDatabase(), services: services)
    }

    @Test func helpListsEveryConfigurationKey() async throws {
        let help = try await command().run("--help")
        #expect(help.status == 0)
        for key in [
            "PARLEY_POSTGRES_HOST", "PARLEY_POSTGRES_PASSWORD", "PARLEY_REDIS_PORT", "PARLEY_MQTT_CA_FILE",
            "PARLEY_HTTP_PORT", "PARLEY_HTTPS_PORT", "PARLEY_TLS_CERTIFICATE", "PARLEY_INTERNAL_PORT",
            "PARLEY_WORKER_INTERNAL_PORT", "PARLEY_BCRYPT_COST", "PARLEY_LOG_LEVEL", "PARLEY_MIGRATIONS_DIRECTORY",
        ] {
            #expect(help.standardOutput.contains(key), "\(key) missing from --help")
        }
        #expect(help.standardOutput.contains("PARLEY_POSTGRES_PASSWORD (secret)"))
    }

    @Test func migrateAppliesOnceAndServeRefusesAStaleSchema() async throws {
        let parley = try await command()

        let pending = try await parley.run("migrate", "status")
        #expect(pending.status == 0)
        #expect(pending.standardOutput.contains("0001  pending  cloud"))

        let refused = try await parley.run("serve")
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("stale"))

        let first = try await parley.run("migrate", "up")
        #expect(first.status == 0)
        #expect(first.standardOutput.contains("applied 4 messenger_roles"))
        #expect(first.standardOutput.contains("applied 5 messenger_delivery"))
        let second = try await parley.run("migrate", "up")
        #expect(second.standardOutput.contains("The schema is current"))
        let status = try await parley.run("migrate", "status")
        #expect(status.standardOutput.contains("0005  applied  messenger_delivery"))
    }

    @Test func userCreateMakesAnAdministratorFromStandardInput() async throws {
        let parley = try await command()
        #expect(try await parley.run("migrate", "up").status == 0)
        let created = try await parley.run(
            "user", "create", "--email", "root@example.com", "--first-name", "Root", "--last-name", "Admin", "--admin",
            input: "correct horse battery\n")
        #expect(created.status == 0)
        #expect(created.standardOutput.contains("(administrator)"))

        let duplicate = try await parley.run(
            "user", "create", "--email", "ROOT@example.com", "--first-name", "R", "--last-name", "A",
            input: "correct horse battery\n")
        #expect(duplicate.status != 0)
        #expect(duplicate.standardError.contains("email-taken"))

        let short = try await parley.run(
            "user", "create", "--email", "x@example.com", "--first-name", "X", "--last-name", "Y", input: "short\n")
        #expect(short.status != 0)
    }

    @Test func aMalformedSettingIsReportedByName() async throws {
        var parley = try await command()
        parley = ParleyCommand(environment: parley.environment.merging(["PARLEY_POSTGRES_PORT": "many"]) { $1 })
        let result = try await parley.run("migrate", "status")
        #expect(result.status != 0)
        #expect(result.standardError.contains("PARLEY_POSTGRES_PORT must be an integer"))
    }

    /// A wrong issuers file stops `parley serve` before it listens, naming the entry.
    @Test func serveRefusesAWrongIssuersFileByName() async throws {
        let path = TestScratch.path("issuers", suffix: ".json")
        try Data(#"[{"issuer": "i", "audience": "a", "jwksUrl": "http://x", "algorithms": ["RS256"]}]"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let services = try TestServices.shared()
        let base = ParleyCommand(database: try await services.makeDatabase(migrated: true), services: services)
        let parley = ParleyCommand(environment: base.environment.merging(["PARLEY_AUTH_ISSUERS_FILE": path]) { $1 })
        let result = try await parley.run("serve")
        #expect(result.status != 0)
        #expect(result.standardError.contains("PARLEY_AUTH_ISSUERS_FILE must be a JSON array of issuers: [0].jwksUrl"))
    }

    @Test(arguments: ["serve", "worker"])
    func startsAndStopsCleanlyOnSIGTERM(subcommand: String) async throws {
        var parley = try await command()
        // A Redis database of its own: this worker runs every role, and must not take the jobs
        // other tests queue on the shared server.
        parley = ParleyCommand(environment: parley.environment.merging(["PARLEY_REDIS_DATABASE": "5"]) { $1 })
        #expect(try await parley.run("migrate", "up").status == 0)
        let log = TestScratch.path("parley-\(subcommand)", suffix: ".log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let pid = try parley.start(subcommand, log: log)

        var listening = false
        for _ in 0..<150 where !listening {
            try await Task.sleep(for: .milliseconds(100))
            listening = (try? String(contentsOfFile: log, encoding: .utf8))?.contains("listening") ?? false
        }
        #expect(listening, "\(subcommand) did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let stopping = ContinuousClock.now
        let status = await Subprocess.terminate(pid)
        #expect(status == 0)
        // Every role stops promptly: no loop sleeps through a graceful shutdown.
        #expect(stopping.duration(to: .now) < .seconds(15))
    }
}

extension ParleyCommand {
    init(environment: [String: String]) {
        self.environment = environment
    }
}

struct DocumentationTests {
    /// The README's configuration table lists every key `parley --help` knows.
    @Test func theReadmeDocumentsEveryConfigurationKey() async throws {
        let help = try await Subprocess.run(try ParleyCommand.binary, ["--help"])
        let keys = Set(help.standardOutput.matches(of: /PARLEY_[A-Z_]+/).map { String($0.output) })
        let readmePath = TestServices.migrationsDirectory.deletingLastPathComponent().appendingPathComponent(
            "README.md")
        let readme = try String(contentsOf: readmePath, encoding: .utf8)
        #expect(keys.count > 30)
        let missing = keys.sorted().filter { !readme.contains("`\($0)`") }
        #expect(missing == [])
    }

    @Test func camelCaseKeysAreReadFromTheirDocumentedVariables() async throws {
        let services = try TestServices.shared()
        let base = ParleyCommand(database: services.postgres(), services: services)
        let parley = ParleyCommand(
            environment: base.environment.merging(["PARLEY_POSTGRES_MAX_CONNECTIONS": "0"]) { $1 })
        let result = try await parley.run("migrate", "status")
        #expect(result.standardError.contains("PARLEY_POSTGRES_MAX_CONNECTIONS must be an integer in 1...1000"))
    }
}

struct DirectoryCommandTests {
    @Test func operatorsManageGroupsAndRolesFromTheCommandLine() async throws {
        let services = try TestServices.shared()
        let parley = ParleyCommand(database: try await services.makeDatabase(migrated: true), services: services)
        let user = try await parley.run(
            "user", "create", "--email", "op@example.com", "--first-name", "O", "--last-name", "P",
            input: "correct horse\n")
        let userID = try #require(user.standardOutput.firstMatch(of: /created user (\d+)/).map { String($0.1) })

        let group = try await parley.run("group", "create", "Night shift")
        #expect(group.status == 0, "\(group.standardError)")
        let groupID = try #require(group.standardOutput.firstMatch(of: /created group (\d+)/).map { String($0.1) })
        #expect(try await parley.run("group", "add-member", groupID, userID).status == 0)
        #expect(try await parley.run("group", "remove-member", groupID, userID).status == 0)
        let again = try await parley.run("group", "remove-member", groupID, userID)
        #expect(again.status != 0)
        #expect(again.standardError.contains("is not a member"))
        #expect(try await parley.run("group", "create", "night SHIFT").standardError.contains("conflict"))

        let role = try await parley.run("role", "create", "assembly", "foreman", "Foreman", "--rank", "1")
        let roleID = try #require(role.standardOutput.firstMatch(of: /created role (\d+)/).map { String($0.1) })
        let list = try await parley.run("role", "list")
        #expect(list.standardOutput.contains("assembly"))
        #expect(list.standardOutput.contains("messenger"))
        #expect(list.standardOutput.contains("\(roleID)\tforeman"))
        #expect(try await parley.run("role", "grant", userID, roleID).status == 0)
        #expect(try await parley.run("role", "revoke", userID, roleID).status == 0)
        #expect(try await parley.run("role", "revoke", userID, roleID).status != 0)
        #expect(try await parley.run("role", "grant", userID, "999999").standardError.contains("not-found"))
    }
}
