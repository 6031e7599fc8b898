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
        /// Thumbnails and probes of uploads, and the orphaned uploads' sweep.
        case media
        /// The `maintenance` queue and its sweep: account and room erasure, data exports,
        /// retention purges.
        case maintenance
        /// Sends the events webhooks subscribe to, signed, in order per room, with retries.
        case webhooks
    }

    /// Roles in one argument, separated by commas or hyphens (`outbox,fanout`; a systemd
    /// instance name, which cannot hold a comma: `parley-worker@outbox-fanout`).
    struct RoleList: ExpressibleByArgument {
        let roles: [Role]

        init?(argument: String) {
            let names = argument.split(whereSeparator: { $0 == "," || $0 == "-" })
            let roles = names.compactMap { Role(rawValue: String($0)) }
            guard !roles.isEmpty, roles.count == names.count else { return nil }
            self.roles = roles
        }

        init(_ roles: [Role]) { self.roles = roles }

        var defaultValueDescription: String { roles.map(\.rawValue).joined(separator: " ") }
    }

    @Option(
        name: .customLong("roles"), parsing: .upToNextOption,
        help: """
            Roles to run (\(Role.allCases.map(\.rawValue).joined(separator: ", ")), separated by spaces, commas or \
            hyphens); all by default.
            """)
    var roleLists: [RoleList] = [RoleList(Role.allCases)]

    /// The roles asked for, each once.
    var roles: Set<Role> { Set(roleLists.flatMap(\.roles)) }

    func run() async throws {
        let settings = try await options.settings()
        try await Runtime.verifySchema(settings)
        let logger = Runtime.logger("worker")
        let traces = try Traces.start(settings: settings, process: "worker")
        let connections = try Connections(settings: settings, role: "worker", ingest: roles.contains(.ingest))
        var http = try settings.http(internalPortKey: SettingKeys.HTTP.workerInternalPort)
        http.port = nil
        http.tlsPort = nil
        let pushClient = try PushHTTPClient(caFile: settings.string(SettingKeys.Push.caFile))
        let graph = try WorkerGraph(
            roles: roles, settings: settings, connections: connections, pushClient: pushClient)
        if roles.contains(.media), !roles.contains(.maintenance) {
            // Until 2026-11-28 `media` ran the maintenance queue too: a deployment that names its
            // roles would otherwise stop erasing accounts without a word.
            logger.notice(
                "this worker runs media without maintenance: erasure, exports and retention need a maintenance worker")
        }
        // Readiness covers the roles too: a relay or queue that stopped moving is named.
        // Only the internal listener: health and metrics.
        let routes = ParleyRoutes(
            probes: connections.probes + graph.probes, readinessTimeout: http.readinessTimeout,
            registry: Runtime.metrics, features: nil)
        let api = APIServer(configuration: http, logger: Runtime.logger("http"))
        let serviceManager = ServiceManagerNotifier()
        let listeners = try api.services(publicRouter: routes.publicRouter(), internalRouter: routes.internalRouter()) {
            listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
            serviceManager.listenerBound()
        }
        serviceManager.expect(listeners: listeners.count)
        logger.notice("worker roles", metadata: ["roles": "\(roles.map(\.rawValue).sorted())"])
        do {
            try await connections.run(
                with: graph.services + listeners + [serviceManager], traces: traces, logger: logger)
        } catch {
            try? await pushClient.shutdown()
            throw error
        }
        try await pushClient.shutdown()
    }
}
