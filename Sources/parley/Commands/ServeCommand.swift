import ArgumentParser
import ParleyAPI

/// `parley serve`: the REST API over TLS (h2, http/1.1) and cleartext (http/1.1, h2c), and
/// the internal listener.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the HTTP API until SIGTERM or SIGINT; in-flight requests finish first.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let settings = try await options.settings()
        try await Runtime.verifySchema(settings)
        let logger = Runtime.logger("serve")
        // Before the routes are built: they trace requests only when it is on.
        let traces = try Traces.start(settings: settings, process: "serve")
        let connections = try Connections(settings: settings, role: "serve")
        let graph = try ServeGraph(settings: settings, connections: connections)
        let api = APIServer(configuration: try settings.http(), logger: Runtime.logger("http"))
        let serviceManager = ServiceManagerNotifier()
        let listeners = try api.services(
            publicRouter: graph.routes.publicRouter(), internalRouter: graph.routes.internalRouter()
        ) { listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
            serviceManager.listenerBound()
        }
        serviceManager.expect(listeners: listeners.count)
        // What a burst of requests freed goes back to the system (see MemoryTrimmer). systemd
        // hears of the stop first (the last service is the first to be told).
        try await connections.run(
            with: [graph.revocationListener, MemoryTrimmer()] + (graph.issuerKeyFetcher.map { [$0] } ?? [])
                + graph.routes.background + listeners
                + [serviceManager], traces: traces,
            logger: logger)
    }
}
