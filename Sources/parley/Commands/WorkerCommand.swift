import ArgumentParser
import Foundation
import Logging
import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyWorker
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
    }

    @Option(
        name: .long, parsing: .upToNextOption,
        help: "Roles to run (\(Role.allCases.map(\.rawValue).joined(separator: ", "))); all by default.")
    var roles: [Role] = Role.allCases

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
        let workers = try roleServices(settings: settings, dependencies: dependencies)
        logger.notice("worker roles", metadata: ["roles": "\(roles.map(\.rawValue))"])
        try await dependencies.run(with: workers + listeners, logger: logger)
    }

    private func roleServices(settings: Settings, dependencies: Dependencies) throws -> [any Service] {
        let fanoutQueue = RedisJobQueue(
            name: "fanout", pool: dependencies.redis, configuration: try settings.jobQueue())
        let rooms = PostgresRoomRepository(database: dependencies.postgres, logger: Runtime.logger("rooms"))
        var services: [any Service] = []
        let process = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        for role in Set(roles) {
            switch role {
            case .outbox:
                services.append(
                    OutboxRelay(
                        database: dependencies.postgres, publisher: dependencies.mqtt, fanout: fanoutQueue,
                        logger: Runtime.logger("outbox")))
            case .ingest:
                let handler = IngestHandler(
                    rooms: RoomService(rooms: rooms), repository: rooms, publisher: dependencies.mqtt,
                    limiter: RedisRateLimiter(pool: dependencies.redis),
                    payloadLimit: try settings.ingestPayloadLimit(),
                    logger: Runtime.logger("ingest"))
                services.append(
                    IngestConsumer(client: dependencies.mqtt, logger: Runtime.logger("ingest"), handle: handler.handle))
            case .fanout:
                let handler = FanoutHandler(
                    readers: rooms, publisher: dependencies.mqtt, queue: fanoutQueue,
                    chunkSize: try settings.fanoutChunkSize(), logger: Runtime.logger("fanout"))
                for index in 0..<(try settings.fanoutConsumers()) {
                    services.append(
                        JobConsumer(
                            queue: fanoutQueue, consumer: "\(process)-\(index)", logger: Runtime.logger("fanout"),
                            handler: handler.handle))
                }
            }
        }
        return services
    }
}
