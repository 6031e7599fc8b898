import ArgumentParser
import Foundation
import ParleyCore
import ParleyRuntime

/// `parley user create`: accounts for operators, e.g. the first administrator.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage user accounts.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account. The password is read from standard input (prompted on a terminal).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "E-mail address, the login name.") var email: String
        @Option(help: "First name.") var firstName: String
        @Option(help: "Last name.") var lastName: String
        @Flag(help: "Make the user a system administrator.") var admin = false

        func run() async throws {
            let settings = try await options.settings()
            // A terminal read waits on a person: a thread of its own, not Swift concurrency's.
            let password = try await BlockingCall.run("parley-password") { Result { try PasswordInput.read() } }
                .get()
            let newUser = NewUser(
                email: email, firstName: firstName, lastName: lastName, passwordHash: "", isAdmin: admin)
            let user = try await Runtime.withDirectory(settings) {
                try await $0.createUser(newUser, password: password)
            }
            print("created user \(user.id) <\(user.email)>\(user.isAdmin ? " (administrator)" : "")")
        }
    }
}

/// Reads a password without putting it on the command line (where `ps` would show it).
/// Its length is the directory service's rule, as for `/v1/admin/users`.
enum PasswordInput {
    static func read() throws -> String {
        let password: String?
        if isatty(STDIN_FILENO) != 0 {
            password = getpass("Password: ").map { String(cString: $0) }
        } else {
            password = readLine(strippingNewline: true)
        }
        guard let password else { throw ValidationError("No password was given on standard input.") }
        return password
    }
}
