import ArgumentParser
import Foundation
import ParleyKit

/// `parley-chat`: chat through a Parley server in the terminal. Lines are messages to the
/// current room; `/rooms`, `/room ID`, `/dm USER-ID`, `/history` and `/quit` are commands.
@main
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley-chat",
        abstract: "Chat through a Parley server in the terminal.",
        discussion: """
            Against deploy/local/run (it prints its ports): parley-chat --email you@example.com \\
              --server http://localhost:HTTP-PORT --broker mqtt://localhost:MQTT-PORT
            The password comes from PARLEY_CHAT_PASSWORD, or is asked for.
            """)

    @Option(help: "The REST API's base URL.")
    var server: String

    @Option(help: "The MQTT broker (mqtt://, mqtts://, ws://, wss://); the sign-in's when left out.")
    var broker: String?

    @Option(help: "The account's e-mail.")
    var email: String

    func run() async throws {
        guard let baseURL = URL(string: server) else { throw ValidationError("--server is not a URL") }
        let endpoint = try broker.map { try MQTTEndpoint(url: $0) }
        let password = ProcessInfo.processInfo.environment["PARLEY_CHAT_PASSWORD"] ?? Terminal.askPassword()
        let parley = ParleyClient(baseURL: baseURL, broker: endpoint)
        try await parley.signIn(email: email, password: password)
        let session = ChatSession(parley: parley, me: await parley.userID ?? 0)
        await session.run(lines: Terminal.lines())
        await parley.signOut()
    }
}
