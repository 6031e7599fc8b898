import Foundation
import Logging
import ParleyCore
import ParleyMQTT
import ParleyMedia
import ParleyPostgres
import ParleyPush
import ParleyRedis
import ParleyRuntime
import ParleyWorker
import ServiceLifecycle

/// `parley worker`'s object graph, read top to bottom: the services of the roles whose
/// ``Parts`` are set, and the readiness probes that watch them, one role per function below.
/// `parley worker` reads the parts from its settings (``Parts/init(roles:settings:connections:pushClient:)``);
/// the tests build the graph over parts of their choosing.
struct WorkerGraph {
    private(set) var services: [any Service] = []
    private(set) var probes: [any DependencyProbe] = []

    private let parts: Parts

    init(_ parts: Parts) {
        self.parts = parts
        // Built once: with the outbox role in the same process, the relay publishes the
        // copies of rooms whose readers the fan-out keeps (``InlineFanout``).
        let fanoutHandler = parts.fanout.map { Self.fanoutHandler(parts, $0) }
        // Before what feeds it (the relay and the fan-out's consumers), so it stops after them
        // and sends what they left it.
        if let readUpdates = fanoutHandler?.readUpdates { services.append(readUpdates) }
        // With the ingest in the same process, its sends wake the relay without a NOTIFY.
        let localRelay = parts.outbox != nil && parts.ingest != nil ? LocalRelay() : nil
        if let outbox = parts.outbox {
            addOutbox(outbox, inline: outbox.plansInline ? fanoutHandler : nil, local: localRelay)
        }
        if let ingest = parts.ingest { addIngest(ingest, localRelay: localRelay) }
        if let fanout = parts.fanout, let fanoutHandler { addFanout(fanout, handler: fanoutHandler) }
        if let push = parts.push { addPush(push) }
        if let media = parts.media { addMedia(media) }
        if let maintenance = parts.maintenance { addMaintenance(maintenance) }
        if let webhooks = parts.webhooks { addWebhooks(webhooks) }
    }

    init(
        roles: Set<WorkerCommand.Role>, settings: Settings, connections: Connections, pushClient: PushHTTPClient
    ) throws {
        self.init(try Parts(roles: roles, settings: settings, connections: connections, pushClient: pushClient))
    }

    // MARK: Roles

    private mutating func addOutbox(_ outbox: Outbox, inline fanout: FanoutHandler?, local: LocalRelay?) {
        let logger = parts.logger("outbox")
        let holding = outbox.notificationWindow.map {
            NotificationHolding(windows: NotificationWindows(length: $0.length), parked: $0.summaries)
        }
        // Before the relay, so it stops after it and releases what the relay last held.
        if let holding {
            services.append(
                NotificationSummaryRelease(windows: holding.windows, parked: holding.parked, logger: logger))
        }
        services.append(
            OutboxRelay(
                database: parts.postgres, publisher: outbox.publisher, fanout: outbox.fanoutJobs,
                planner: fanout.map { InlineFanout(sharing: $0) },
                webhooks: outbox.webhookJobs.map {
                    WebhookFeed(
                        queue: $0, store: PostgresWebhookRepository(database: parts.postgres, logger: logger),
                        logger: logger)
                }, holding: holding, fileLinks: parts.fileLinks, logger: logger,
                receiptsMaxMembers: parts.receiptsMaxMembers, local: local))
        services.append(OutboxMonitor(database: parts.postgres, logger: logger))
        probes.append(OutboxRelayProbe(database: parts.postgres, stallLimit: outbox.stallLimit, logger: logger))
    }

    private mutating func addIngest(_ ingest: Ingest, localRelay: LocalRelay?) {
        let logger = parts.logger("ingest")
        let rooms = parts.rooms(logger)
        let service = RoomService(
            rooms: rooms, messages: parts.messages(logger, receiptsInAnswers: false, localRelay: localRelay),
            batching: nil,
            limits: ingest.abuseLimits,
            buckets: Adapters.roomBuckets(RedisTokenBuckets(pool: parts.redis, namespace: ingest.rateLimitNamespace)),
            hook: ingest.messageHook,
            bots: BotRoster(load: PostgresBotRepository(database: parts.postgres, logger: logger).ids))
        // Delivery receipts from chat-in.
        let receipts = Adapters.receipts(rooms: service, database: parts.postgres, logger: logger)
        services.append(receipts.coalescer)
        let handler = IngestHandler(
            rooms: service, repository: rooms, publisher: ingest.publisher,
            limiter: RedisRateLimiter(pool: parts.redis, namespace: ingest.rateLimitNamespace),
            payloadLimit: ingest.payloadLimit, senders: ingest.senders, writers: ingest.recentWriters,
            receipts: receipts.service,
            privacy: PrivacyService(privacy: PostgresPrivacyRepository(database: parts.postgres, logger: logger)),
            logger: logger)
        services.append(
            IngestConsumer(
                client: ingest.input, logger: logger, lanes: ingest.lanes, batchLimit: ingest.batchLimit,
                commitInterval: ingest.commitInterval, keepsSubscription: ingest.keepsSubscription,
                senderStampKey: ingest.senderStampKey, progressEvery: ingest.progressEvery, handle: handler.handle))
    }

    private static func fanoutHandler(_ parts: Parts, _ fanout: Fanout) -> FanoutHandler {
        let rooms = parts.rooms(parts.logger("fanout"))
        return FanoutHandler(
            readers: rooms,
            publisher: fanout.publisher, queue: fanout.queue, chunkSize: fanout.chunkSize,
            pushes: fanout.pushJobs.map {
                PushFanout(
                    audience: PostgresPushRepository(database: parts.postgres, logger: parts.logger("push")),
                    queue: $0, composer: PushComposer(content: fanout.pushContent),
                    readInterval: fanout.readPushInterval,
                    onFailure: { [logger = parts.logger("push")] error in
                        logger.warning("reads' silent pushes not queued", metadata: ["error": "\(error)"])
                    })
            },
            // Any relay's summaries, a backstop parked before this process's configuration changed included.
            summaries: rooms, logger: parts.logger("fanout"))
    }

    private mutating func addFanout(_ fanout: Fanout, handler: FanoutHandler) {
        probes.append(JobQueueProbe(queue: fanout.queue))
        for index in 0..<fanout.consumers {
            services.append(
                JobConsumer(
                    queue: fanout.queue, consumer: "\(parts.process)-\(index)", logger: parts.logger("fanout"),
                    handler: handler.handle))
        }
    }

    private mutating func addPush(_ push: Push) {
        let logger = parts.logger("push")
        if push.senders.isEmpty {
            logger.warning("no push provider is configured; push jobs will be dropped")
        }
        let handler = PushHandler(
            senders: push.senders, tokens: PostgresPushRepository(database: parts.postgres, logger: logger),
            logger: logger)
        probes.append(JobQueueProbe(queue: push.queue))
        services.append(
            JobConsumer(queue: push.queue, consumer: "\(parts.process)-push", logger: logger, handler: handler.handle))
    }

    private mutating func addMedia(_ media: Media) {
        let logger = parts.logger("media")
        let files = PostgresFileRepository(database: parts.postgres, logger: logger)
        let handler = MediaHandler(
            files: files, store: media.store, processor: media.processor, workRoot: media.workDirectory,
            logger: logger)
        probes.append(JobQueueProbe(queue: media.queue))
        services.append(
            JobConsumer(queue: media.queue, consumer: "\(parts.process)-media", logger: logger, handler: handler.handle)
        )
        services.append(OrphanSweeper(files: files, store: media.store, grace: media.orphanGrace, logger: logger))
    }

    private mutating func addWebhooks(_ webhooks: Webhooks) {
        let logger = parts.logger("webhooks")
        let dispatcher = WebhookDispatcher(
            store: PostgresWebhookRepository(database: parts.postgres, logger: logger),
            transport: webhooks.transport,
            replies: BotReplyPoster(
                rooms: RoomService(
                    rooms: parts.rooms(logger), messages: parts.messages(logger), batching: nil,
                    hook: webhooks.messageHook)),
            policy: webhooks.policy, logger: logger)
        probes.append(JobQueueProbe(queue: webhooks.queue))
        services.append(
            JobConsumer(
                queue: webhooks.queue, consumer: "\(parts.process)-webhooks", logger: logger,
                handler: dispatcher.record(job:)))
        services.append(dispatcher)
    }

    private mutating func addMaintenance(_ maintenance: Maintenance) {
        let logger = parts.logger("maintenance")
        let work = Self.maintenanceWork(parts, maintenance.work, jobs: maintenance.queue)
        probes.append(JobQueueProbe(queue: maintenance.queue))
        services.append(
            JobConsumer(
                queue: maintenance.queue, consumer: "\(parts.process)-maintenance", logger: logger,
                handler: work.handler.handle))
        services.append(work.sweeper)
    }

    /// The maintenance role's job handler and sweep, which queue their work (and a long
    /// erasure's continuation) on `jobs`; a test runs the handler on jobs it keeps.
    static func maintenanceWork(
        _ parts: Parts, _ maintenance: MaintenanceWork, jobs: any JobQueue
    ) -> (handler: MaintenanceHandler, sweeper: MaintenanceSweeper) {
        let logger = parts.logger("maintenance")
        let files = PostgresFileRepository(database: parts.postgres, logger: logger)
        let rooms = parts.rooms(logger)
        let erasure = PostgresErasureRepository(rooms: rooms)
        let exports = PostgresExportRepository(database: parts.postgres, logger: logger)
        let eraser = FileEraser(files: files, store: maintenance.store, logger: logger)
        // Erasures run in bounded steps, well within the visibility timeout; an export that
        // outlives it may be built twice, and only one is kept (ExportBuilder).
        let handler = MaintenanceHandler(
            erasure: erasure, rooms: rooms, actions: parts.messages(logger), files: eraser,
            export: ExportBuilder(
                exports: exports, files: files, store: maintenance.store,
                archiver: ZipArchiver(runner: maintenance.runner), workRoot: maintenance.workDirectory,
                logger: logger),
            jobs: jobs, stepLimit: maintenance.stepLimit, logger: logger)
        let sweeper = MaintenanceSweeper(
            erasure: erasure, exports: exports, files: eraser, jobs: jobs,
            defaultRetentionDays: maintenance.retentionDefaultDays,
            logs: [
                Retention(
                    "webhook deliveries", records: PostgresWebhookRepository(database: parts.postgres, logger: logger),
                    days: maintenance.logRetentionDays.deliveries),
                Retention(
                    "audit entries", records: PostgresAPIKeyRepository(database: parts.postgres, logger: logger),
                    days: maintenance.logRetentionDays.audit),
            ], interval: maintenance.interval, logger: logger)
        return (handler, sweeper)
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
    /// Filled by the outbox relay (events some webhook subscribes to), drained by the webhooks role.
    static let webhooks = "webhooks"
}
