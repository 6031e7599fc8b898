import ArgumentParser
import ParleyCore
import ParleyPostgres

/// `parley role list|create|grant|revoke`: applications' roles and who holds them.
struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role", abstract: "Manage applications' roles and role grants.",
        subcommands: [List.self, Create.self, Grant.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List applications and their roles.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let settings = try await options.settings()
            for app in try await Runtime.withDirectory(settings, { try await $0.applications() }) {
                print("\(app.code) (\(app.name))")
                for role in app.roles { print("  \(role.id)\t\(role.code)\trank \(role.rank)\t\(role.name)") }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a role of an application (the application too, when new).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Application code, e.g. assembly.") var app: String
        @Argument(help: "Role code, e.g. foreman.") var code: String
        @Argument(help: "Display name.") var name: String
        @Option(help: "Rank: a higher rank includes the lower ones.") var rank = 0

        func run() async throws {
            let settings = try await options.settings()
            let role = try await Runtime.withDirectory(settings) {
                try await $0.createRole(appCode: app, code: code, name: name, rank: rank)
            }
            print("created role \(role.id) \(app)/\(role.code)")
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant a role to a user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User id.") var user: Int64
        @Argument(help: "Role id (see parley role list).") var role: Int64

        func run() async throws {
            let settings = try await options.settings()
            try await Runtime.withDirectory(settings) { try await $0.grantRole(userID: user, roleID: role) }
            print("user \(user) holds role \(role)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a role from a user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User id.") var user: Int64
        @Argument(help: "Role id.") var role: Int64

        func run() async throws {
            let settings = try await options.settings()
            try await Runtime.withDirectory(settings) { try await $0.revokeRole(userID: user, roleID: role) }
            print("took role \(role) from user \(user)")
        }
    }
}
