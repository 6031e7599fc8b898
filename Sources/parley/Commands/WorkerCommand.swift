import ArgumentParser
import Logging
import ParleyAPI
import ParleyCore
import ParleyPush
import ServiceLifecycle

/// `parley worker`: background work, by role. Every role can run in several processes.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "Run background workers until SIGTERM or SIGINT.")
    @OptionGroup var options: GlobalOptions

    /// What a worker process does.
    enum Role: String, CaseIterable, ExpressibleByArgument {
        /// Publishes committed room events (the transactional outbox) and queues their fan-out.
        case outbox
        /// Copies events to the members' notification topics.
        case fanout
        /// Stores client input from `chat-in` (shared subscription).
        case ingest
        /// Sends pushes through APNs, FCM and the webhook.
        case push
        /// Thumbnails and probes of uploads; deletes orphaned uploads.
        case media
    }

    @Option(
        name: .long, parsing: .upToNextOption,
        help: "Roles to run (\(Role.allCases.map(\.rawValue).joined(separator: ", "))); all by default.")
    var roles: [Role] = Role.allCases

    func run() async throws {
        let settings = try await options.settings()
        try await Runtime.verifySchema(settings)
        let logger = Runtime.logger("worker")
        let dependencies = try Dependencies(settings: settings, role: "worker", ingest: roles.contains(.ingest))
        var http = try settings.http(internalPortKey: SettingKeys.HTTP.workerInternalPort)
        http.port = nil
        http.tlsPort = nil
        let pushClient = try PushHTTPClient(caFile: settings.string(SettingKeys.Push.caFile))
        let graph = try WorkerGraph(
            roles: Set(roles), settings: settings, dependencies: dependencies, pushClient: pushClient)
        // Readiness covers the roles too: a relay or queue that stopped moving is named.
        // Only the internal listener: health and metrics.
        let routes = ParleyRoutes(
            probes: dependencies.probes + graph.probes, readinessTimeout: http.readinessTimeout,
            registry: Runtime.metrics, features: nil)
        let api = APIServer(configuration: http, logger: Runtime.logger("http"))
        let listeners = try api.services(publicRouter: routes.publicRouter(), internalRouter: routes.internalRouter()) {
            listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
        }
        logger.notice("worker roles", metadata: ["roles": "\(roles.map(\.rawValue))"])
        do {
            try await dependencies.run(with: graph.services + listeners, logger: logger)
        } catch {
            try? await pushClient.shutdown()
            throw error
        }
        try await pushClient.shutdown()
    }
}
