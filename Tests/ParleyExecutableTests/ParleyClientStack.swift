import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession
import ParleyKit
import ParleyTestSupport
import Synchronization
import Testing

/// `parley serve` and `parley worker` with a private broker running Parley's plugin, and
/// ParleyClients signed in to it: what an app built on ParleyKit talks to.
struct ParleyClientStack {
    /// The HTTP clients ParleyKit's REST goes through: Linux's default and Apple's (URLSession,
    /// here Foundation's on Linux).
    enum Transport: String, CaseIterable, Sendable {
        case asyncHTTPClient, urlSession

        func make() -> any ClientTransport {
            switch self {
            case .asyncHTTPClient: AsyncHTTPClientTransport()
            case .urlSession: URLSessionTransport()
            }
        }
    }

    let services: TestServices
    let stack: LiveStack
    let transport: Transport

    /// Runs `body` on a fresh stack with `environment` over the stack's settings; stops it after.
    static func run(
        environment: [String: String] = [:], transport: Transport = .asyncHTTPClient,
        _ body: (ParleyClientStack) async throws -> Void
    ) async throws {
        let services = try await TestServices.makePrivate()
        do {
            try await services.usePlugin(try PluginBroker.pluginPath)
            let database = try await services.makeDatabase(migrated: true)
            let parley = ParleyCommand(
                environment: ParleyCommand(database: database, services: services).environment.merging(
                    [
                        "PARLEY_INTERNAL_PORT": String(services.port("INTERNAL")),
                        "PARLEY_MQTT_TOKEN_KEY": services.value("PARLEY_LOCAL_MQTT_TOKEN_KEY") ?? "",
                        "PARLEY_MQTT_STAMP_KEY": services.value("PARLEY_LOCAL_MQTT_STAMP_KEY") ?? "",
                        "PARLEY_INGEST_SESSION": "parley-ingest-kit-\(UUID().uuidString.prefix(8))",
                    ].merging(environment) { $1 }
                ) { $1 })
            let stack = try await LiveStack.start(parley)
            do {
                try await body(ParleyClientStack(services: services, stack: stack, transport: transport))
            } catch {
                Issue.record("worker log: \(stack.log("worker.log"))")
                await stack.stop()
                throw error
            }
            await stack.stop()
        } catch {
            try? await services.shutdown()
            throw error
        }
        try await services.shutdown()
    }

    static let password = "correct horse battery"

    /// A new user's e-mail and id (password ``password``).
    func registered(_ name: String) async throws -> (email: String, id: Int) {
        let email = "\(name)-\(UUID().uuidString.prefix(8))@example.com"
        let registered = try await stack.request(
            "POST", "/v1/auth/register",
            body: #"{"email":"\#(email)","password":"\#(Self.password)","firstName":"\#(name)","lastName":"Kit"}"#)
        guard registered.status == 201, let id = Self.id(in: registered.text) else {
            throw TestEnvironmentError("sign-up failed: \(registered.status) \(registered.text)")
        }
        return (email, id)
    }

    /// A ParleyClient of the stack, with its broker, not signed in; its REST requests go to
    /// `log` too, when given.
    func client(renewBefore: Duration = .seconds(30), log: RequestLog? = nil) -> ParleyClient {
        let made = transport.make()
        return ParleyClient(
            baseURL: URL(string: stack.base)!, broker: MQTTEndpoint(host: "127.0.0.1", port: services.port("MQTT")),
            renewBefore: renewBefore, transport: log.map { RecordingTransport(inner: made, log: $0) } ?? made)
    }

    /// A new user signed in on a new ParleyClient, with the stack's broker.
    func signedIn(
        _ name: String, renewBefore: Duration = .seconds(30), log: RequestLog? = nil
    ) async throws -> (client: ParleyClient, id: Int) {
        let (email, id) = try await registered(name)
        let client = client(renewBefore: renewBefore, log: log)
        try await client.signIn(email: email, password: Self.password)
        return (client, id)
    }

    /// The id of a user's JSON.
    private static func id(in json: String) -> Int? {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["id"] as? Int
    }
}

/// The paths (with their queries) of the REST requests a client made; and how long its room
/// list requests are held before they go (a slow network, a token renewed first).
final class RequestLog: Sendable {
    private let paths = Mutex<[String]>([])
    let roomListDelay = Mutex<Duration>(.zero)

    func add(_ path: String) { paths.withLock { $0.append(path) } }
    var all: [String] { paths.withLock { $0 } }
}

/// A transport that notes each request's path in a ``RequestLog`` and sends it on.
struct RecordingTransport: ClientTransport {
    let inner: any ClientTransport
    let log: RequestLog

    func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let path = request.path ?? ""
        log.add(path)
        if path == "/v1/rooms" || path.hasPrefix("/v1/rooms?") {
            try await Task.sleep(for: log.roomListDelay.withLock { $0 })
        }
        return try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}

/// A stream's events, collected as they come.
final class Collected: Sendable {
    private final class Log: Sendable {
        let events = Mutex<[ParleyEvent]>([])
    }

    private let log = Log()
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<ParleyEvent>) {
        let log = self.log
        reader = Task { for await event in stream { log.events.withLock { $0.append(event) } } }
    }

    deinit { reader.cancel() }

    var all: [ParleyEvent] { log.events.withLock { $0 } }

    /// The new messages told so far, in the order told.
    var messages: [ParleyMessage] {
        all.compactMap { if case .new(let message) = $0 { message } else { nil } }
    }

    /// Waits up to `timeout` for an event `matches` takes; whether one came.
    func waitFor(timeout: Duration = .seconds(20), _ matches: (ParleyEvent) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !all.contains(where: matches), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return all.contains(where: matches)
    }

    /// Waits up to `timeout` for `count` new messages.
    func waitForMessages(_ count: Int, timeout: Duration = .seconds(20)) async -> [ParleyMessage] {
        let deadline = ContinuousClock.now + timeout
        while messages.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        return messages
    }
}
