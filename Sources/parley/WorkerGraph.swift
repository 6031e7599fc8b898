import Foundation
import ParleyCore
import ParleyMQTT
import ParleyMedia
import ParleyPostgres
import ParleyPush
import ParleyRedis
import ParleyWorker
import ServiceLifecycle

/// `parley worker`'s object graph: the services of the chosen roles over the process's
/// connections, and the readiness probes that watch them, one role per function below. A
/// role reads only its own settings, so a bad media setting does not stop an outbox worker.
struct WorkerGraph {
    private(set) var services: [any Service] = []
    private(set) var probes: [any DependencyProbe] = []

    private let settings: Settings
    private let connections: Connections
    /// The fan-out role's handler, built once: with the outbox role in the same process, the
    /// relay publishes the copies of rooms whose readers it keeps itself (``InlineFanout``).
    private var fanoutHandler: FanoutHandler?
    /// Names this process's consumers in the queues' consumer groups.
    private let process = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"

    init(
        roles: Set<WorkerCommand.Role>, settings: Settings, connections: Connections, pushClient: PushHTTPClient
    ) throws {
        self.settings = settings
        self.connections = connections
        if roles.contains(.fanout) { fanoutHandler = try makeFanoutHandler() }
        for role in WorkerCommand.Role.allCases where roles.contains(role) {
            switch role {
            case .outbox: try addOutbox()
            case .ingest: try addIngest()
            case .fanout: try addFanout()
            case .push: try addPush(client: pushClient)
            case .media: try addMedia()
            case .maintenance: try addMaintenance()
            }
        }
    }

    // MARK: The queues between the roles

    private func fanoutQueue() throws -> RedisJobQueue {
        RedisJobQueue(name: QueueName.fanout, pool: connections.redis, configuration: try settings.jobQueue())
    }

    /// Pushes wait on slow providers: more in flight, and a longer lease than other jobs.
    private func pushQueue() throws -> RedisJobQueue {
        var configuration = try settings.jobQueue()
        configuration.concurrency = try settings.pushConcurrency()
        configuration.batchSize = configuration.concurrency
        configuration.blockFor = .seconds(1)
        configuration.visibilityTimeout = try settings.pushVisibilityTimeout()
        return RedisJobQueue(name: QueueName.push, pool: connections.redis, configuration: configuration)
    }

    private func rooms() throws -> PostgresRoomRepository {
        PostgresRoomRepository(
            database: connections.postgres, logger: Runtime.logger("rooms"), fileLinks: try settings.fileLinks())
    }

    // MARK: Roles

    /// Publishes committed room events (the transactional outbox) and queues their fan-out.
    private mutating func addOutbox() throws {
        let logger = Runtime.logger("outbox")
        services.append(
            OutboxRelay(
                database: connections.postgres, publisher: connections.relayPublisher, fanout: try fanoutQueue(),
                planner: fanoutHandler.map { InlineFanout(sharing: $0) }, fileLinks: try settings.fileLinks(),
                logger: logger))
        services.append(OutboxMonitor(database: connections.postgres, logger: logger))
        probes.append(
            OutboxRelayProbe(
                database: connections.postgres, stallLimit: try settings.outboxStallLimit(), logger: logger))
    }

    /// Stores client input from `chat-in` (a shared subscription), in lanes of batches.
    private mutating func addIngest() throws {
        guard let input = connections.ingestInput else {
            preconditionFailure("the ingest role needs Connections built with ingest: true")
        }
        let rooms = try rooms()
        let handler = IngestHandler(
            rooms: RoomService(
                rooms: rooms, batching: nil, limits: try settings.abuseLimits(),
                buckets: LeasedTokenBuckets(store: RedisTokenBuckets(pool: connections.redis))),
            repository: rooms, publisher: connections.mqtt,
            limiter: RedisRateLimiter(pool: connections.redis), payloadLimit: try settings.ingestPayloadLimit(),
            senders: try settings.ingestSender(), writers: connections.recentWriters, logger: Runtime.logger("ingest"))
        services.append(
            IngestConsumer(
                client: input, logger: Runtime.logger("ingest"), lanes: try settings.ingestConcurrency(),
                batchLimit: try settings.messageBatchLimit(), commitInterval: try settings.ingestCommitInterval(),
                keepsSubscription: settings.string(SettingKeys.Jobs.ingestSession) != nil,
                senderStampKey: try settings.senderStampKey(),
                // EMQX has no Parley plugin to report to.
                progressEvery: connections.emqx == nil ? .milliseconds(100) : nil, handle: handler.handle))
    }

    private func makeFanoutHandler() throws -> FanoutHandler {
        let audience = PostgresPushRepository(database: connections.postgres, logger: Runtime.logger("push"))
        return FanoutHandler(
            readers: try rooms(), publisher: connections.mqtt, queue: try fanoutQueue(),
            chunkSize: try settings.fanoutChunkSize(),
            pushes: PushFanout(
                audience: audience, queue: try pushQueue(), composer: PushComposer(content: try settings.pushContent())),
            logger: Runtime.logger("fanout"))
    }

    /// Copies events to the members' notification topics and queues their pushes.
    private mutating func addFanout() throws {
        let queue = try fanoutQueue()
        let handler = try fanoutHandler ?? makeFanoutHandler()
        probes.append(JobQueueProbe(queue: queue))
        for index in 0..<(try settings.fanoutConsumers()) {
            services.append(
                JobConsumer(
                    queue: queue, consumer: "\(process)-\(index)", logger: Runtime.logger("fanout"),
                    handler: handler.handle))
        }
    }

    /// Sends pushes through APNs, FCM and the webhook.
    private mutating func addPush(client: PushHTTPClient) throws {
        let logger = Runtime.logger("push")
        let senders = Adapters.pushSenders(try settings.pushProviders(), client: client)
        if senders.isEmpty {
            logger.warning("no push provider is configured; push jobs will be dropped")
        }
        let queue = try pushQueue()
        let handler = PushHandler(
            senders: senders, tokens: PostgresPushRepository(database: connections.postgres, logger: logger),
            logger: logger)
        probes.append(JobQueueProbe(queue: queue))
        services.append(
            JobConsumer(queue: queue, consumer: "\(process)-push", logger: logger, handler: handler.handle))
    }

    /// The configured store of uploads (media and maintenance each hold one; it keeps no state).
    private func blobStore() throws -> any BlobStore {
        try Adapters.blobStore(try settings.blobStoreChoice(), database: connections.postgres)
    }

    /// Where media tools and exports write their work files; created if missing.
    private func workDirectory() throws -> String {
        let workDirectory = try settings.mediaWorkDirectory()
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        return workDirectory
    }

    /// Thumbnails and probes of uploads; deletes orphaned uploads.
    private mutating func addMedia() throws {
        let logger = Runtime.logger("media")
        let files = PostgresFileRepository(database: connections.postgres, logger: logger)
        let store = try blobStore()
        let workDirectory = try workDirectory()
        let handler = MediaHandler(
            files: files, store: store, processor: ToolMediaProcessor(runner: try settings.toolRunner()),
            workRoot: workDirectory, logger: logger)
        var configuration = try settings.jobQueue()
        // Tools may take their whole time limit: the job must not be reclaimed meanwhile.
        configuration.visibilityTimeout = max(configuration.visibilityTimeout, .seconds(300))
        let queue = RedisJobQueue(name: QueueName.media, pool: connections.redis, configuration: configuration)
        probes.append(JobQueueProbe(queue: queue))
        services.append(
            JobConsumer(queue: queue, consumer: "\(process)-media", logger: logger, handler: handler.handle))
        services.append(OrphanSweeper(files: files, store: store, grace: try settings.orphanGrace(), logger: logger))
    }

    /// Erasing deleted accounts and rooms, data exports, retention purges: the maintenance
    /// queue and the sweep that finds what its jobs missed.
    private mutating func addMaintenance() throws {
        let logger = Runtime.logger("maintenance")
        let files = PostgresFileRepository(database: connections.postgres, logger: logger)
        let store = try blobStore()
        let workDirectory = try workDirectory()
        // Erasures run in bounded steps, well within the visibility timeout; an export that
        // outlives it may be built twice, and only one is kept (ExportBuilder).
        let queue = RedisJobQueue(
            name: QueueName.maintenance, pool: connections.redis, configuration: try settings.jobQueue())
        let rooms = try rooms()
        let erasure = PostgresErasureRepository(rooms: rooms)
        let exports = PostgresExportRepository(database: connections.postgres, logger: logger)
        let eraser = FileEraser(files: files, store: store, logger: logger)
        let handler = MaintenanceHandler(
            erasure: erasure, rooms: rooms, actions: rooms, files: eraser,
            export: ExportBuilder(
                exports: exports, files: files, store: store,
                archiver: ZipArchiver(runner: try settings.toolRunner()), workRoot: workDirectory, logger: logger),
            jobs: queue, logger: logger)
        probes.append(JobQueueProbe(queue: queue))
        services.append(
            JobConsumer(queue: queue, consumer: "\(process)-maintenance", logger: logger, handler: handler.handle))
        services.append(
            MaintenanceSweeper(
                erasure: erasure, exports: exports, files: eraser, jobs: queue,
                defaultRetentionDays: try settings.retentionDefaultDays(), interval: try settings.maintenanceInterval(),
                logger: logger))
    }
}

/// The job queues' names in Redis, shared by the processes that fill and drain them.
enum QueueName {
    static let fanout = "fanout"
    static let push = "push"
    /// Filled by `serve` (uploads), drained by the media role.
    static let media = "media"
    /// Filled by `serve` (deletions, exports) and the sweeper, drained by the maintenance role.
    static let maintenance = "maintenance"
}
