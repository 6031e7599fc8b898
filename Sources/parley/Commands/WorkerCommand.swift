import ArgumentParser
import ParleyAPI

/// `parley worker`: background job processing. It holds the connections every job role
/// needs and answers health and metrics on its own internal port; the job roles (ingest,
/// fan-out, push, media) arrive with the features that define their jobs.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "Run background workers until SIGTERM or SIGINT.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let settings = try await options.settings()
        try await Runtime.verifySchema(settings)
        let logger = Runtime.logger("worker")
        let dependencies = try Dependencies(settings: settings, role: "worker")
        var http = try settings.http(internalPortKey: SettingKeys.HTTP.workerInternalPort)
        http.port = nil
        http.tlsPort = nil
        let api = APIServer(
            configuration: http, probes: dependencies.probes, registry: Runtime.metrics, logger: Runtime.logger("http"))
        let listeners = try api.services { listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
        }
        try await dependencies.run(with: listeners, logger: logger)
    }
}
