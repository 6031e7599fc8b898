import ArgumentParser
import ParleyCore
import ParleyPostgres

/// `parley group create|add-member|remove-member`: the operator's side of `/v1/admin/groups`.
struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Manage user groups.",
        subcommands: [Create.self, AddMember.self, RemoveMember.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a group.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The group's name (unique, case-insensitive).") var name: String

        func run() async throws {
            let settings = try await options.settings()
            let group = try await Runtime.withDirectory(settings) { try await $0.createGroup(name: name) }
            print("created group \(group.id) \(group.name)")
        }
    }

    struct AddMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-member", abstract: "Add a user to a group.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Group id.") var group: Int64
        @Argument(help: "User id.") var user: Int64

        func run() async throws {
            let settings = try await options.settings()
            try await Runtime.withDirectory(settings) { try await $0.addMember(groupID: group, userID: user) }
            print("user \(user) is a member of group \(group)")
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-member", abstract: "Remove a user from a group.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Group id.") var group: Int64
        @Argument(help: "User id.") var user: Int64

        func run() async throws {
            let settings = try await options.settings()
            try await Runtime.withDirectory(settings) { try await $0.removeMember(groupID: group, userID: user) }
            print("removed user \(user) from group \(group)")
        }
    }
}
