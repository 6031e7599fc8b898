import ArgumentParser
import Foundation
import Logging
import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyMedia
import ParleyPostgres
import ParleyPush
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
        let dependencies = try Dependencies(settings: settings, role: "worker")
        var http = try settings.http(internalPortKey: SettingKeys.HTTP.workerInternalPort)
        http.port = nil
        http.tlsPort = nil
        let pushClient = try PushHTTPClient(caFile: settings.string(SettingKeys.Push.caFile))
        let (workers, roleProbes) = try roleServices(
            settings: settings, dependencies: dependencies, pushClient: pushClient)
        // Readiness covers the roles too: a relay or queue that stopped moving is named.
        // Only the internal listener: health and metrics.
        let routes = ParleyRoutes(
            probes: dependencies.probes + roleProbes, readinessTimeout: http.readinessTimeout,
            registry: Runtime.metrics, features: nil)
        let api = APIServer(configuration: http, logger: Runtime.logger("http"))
        let listeners = try api.services(publicRouter: routes.publicRouter(), internalRouter: routes.internalRouter()) {
            listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
        }
        logger.notice("worker roles", metadata: ["roles": "\(roles.map(\.rawValue))"])
        do {
            try await dependencies.run(with: workers + listeners, logger: logger)
        } catch {
            try? await pushClient.shutdown()
            throw error
        }
        try await pushClient.shutdown()
    }

    /// The services of the chosen roles, and the readiness probes that watch them.
    private func roleServices(settings: Settings, dependencies: Dependencies, pushClient: PushHTTPClient) throws
        -> (services: [any Service], probes: [any DependencyProbe])
    {
        let fanoutQueue = RedisJobQueue(
            name: "fanout", pool: dependencies.redis, configuration: try settings.jobQueue())
        var pushQueueConfiguration = try settings.jobQueue()
        pushQueueConfiguration.concurrency = try settings.pushConcurrency()
        pushQueueConfiguration.batchSize = pushQueueConfiguration.concurrency
        pushQueueConfiguration.blockFor = .seconds(1)
        pushQueueConfiguration.visibilityTimeout = try settings.pushVisibilityTimeout()
        let pushQueue = RedisJobQueue(name: "push", pool: dependencies.redis, configuration: pushQueueConfiguration)
        let pushes = PostgresPushRepository(database: dependencies.postgres, logger: Runtime.logger("push"))
        let fileLinks = try settings.fileLinks()
        let rooms = PostgresRoomRepository(
            database: dependencies.postgres, logger: Runtime.logger("rooms"), fileLinks: fileLinks)
        var services: [any Service] = []
        var probes: [any DependencyProbe] = []
        let process = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        for role in Set(roles) {
            switch role {
            case .outbox:
                let logger = Runtime.logger("outbox")
                services.append(
                    OutboxRelay(
                        database: dependencies.postgres, publisher: dependencies.mqtt, fanout: fanoutQueue,
                        fileLinks: fileLinks, logger: logger))
                services.append(OutboxMonitor(database: dependencies.postgres, logger: logger))
                probes.append(
                    OutboxRelayProbe(
                        database: dependencies.postgres, stallLimit: try settings.outboxStallLimit(), logger: logger))
            case .ingest:
                let handler = IngestHandler(
                    rooms: RoomService(rooms: rooms), repository: rooms, publisher: dependencies.mqtt,
                    limiter: RedisRateLimiter(pool: dependencies.redis),
                    payloadLimit: try settings.ingestPayloadLimit(),
                    logger: Runtime.logger("ingest"))
                services.append(
                    IngestConsumer(
                        client: dependencies.mqtt, logger: Runtime.logger("ingest"),
                        lanes: try settings.ingestConcurrency(), batchLimit: try settings.messageBatchLimit(),
                        handle: handler.handle))
            case .fanout:
                let handler = FanoutHandler(
                    readers: rooms, publisher: dependencies.mqtt, queue: fanoutQueue,
                    chunkSize: try settings.fanoutChunkSize(),
                    pushes: PushFanout(
                        audience: pushes, queue: pushQueue, composer: PushComposer(content: try settings.pushContent())),
                    logger: Runtime.logger("fanout"))
                probes.append(JobQueueProbe(queue: fanoutQueue))
                for index in 0..<(try settings.fanoutConsumers()) {
                    services.append(
                        JobConsumer(
                            queue: fanoutQueue, consumer: "\(process)-\(index)", logger: Runtime.logger("fanout"),
                            handler: handler.handle))
                }
            case .push:
                let senders = try settings.pushSenders(client: pushClient)
                let logger = Runtime.logger("push")
                if senders.isEmpty {
                    logger.warning("no push provider is configured; push jobs will be dropped")
                }
                let handler = PushHandler(senders: senders, tokens: pushes, logger: logger)
                probes.append(JobQueueProbe(queue: pushQueue))
                services.append(
                    JobConsumer(queue: pushQueue, consumer: "\(process)-push", logger: logger, handler: handler.handle))
            case .media:
                let logger = Runtime.logger("media")
                let files = PostgresFileRepository(database: dependencies.postgres, logger: logger)
                let store = try settings.blobStore(database: dependencies.postgres)
                let workDirectory = try settings.mediaWorkDirectory()
                try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
                let handler = MediaHandler(
                    files: files, store: store, processor: ToolMediaProcessor(runner: try settings.toolRunner()),
                    workRoot: workDirectory, logger: logger)
                var mediaQueue = try settings.jobQueue()
                // Tools may take their whole time limit: the job must not be reclaimed meanwhile.
                mediaQueue.visibilityTimeout = max(mediaQueue.visibilityTimeout, .seconds(300))
                let queue = RedisJobQueue(name: "media", pool: dependencies.redis, configuration: mediaQueue)
                probes.append(JobQueueProbe(queue: queue))
                services.append(
                    JobConsumer(queue: queue, consumer: "\(process)-media", logger: logger, handler: handler.handle))
                services.append(
                    OrphanSweeper(files: files, store: store, grace: try settings.orphanGrace(), logger: logger))
            }
        }
        return (services, probes)
    }
}
