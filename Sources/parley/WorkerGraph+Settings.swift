import Foundation
import ParleyCore
import ParleyMedia
import ParleyOutbound
import ParleyPush
import ParleyRedis

extension WorkerGraph.Parts {
    /// The parts of `roles` as `parley worker` reads them: a role reads only its own
    /// settings, so a bad media setting does not stop an outbox worker.
    init(
        roles: Set<WorkerCommand.Role>, settings: Settings, connections: Connections, pushClient: PushHTTPClient
    ) throws {
        self.init(
            postgres: connections.postgres, redis: connections.redis, fileLinks: try settings.fileLinks(),
            receiptsMaxMembers: try settings.receiptsMaxMembers(),
            process: "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)")
        let queues = Queues(settings: settings, redis: connections.redis)
        if roles.contains(.outbox) {
            outbox = WorkerGraph.Outbox(
                publisher: connections.relayPublisher, fanoutJobs: try queues.fanout(),
                stallLimit: try settings.outboxStallLimit(), webhookJobs: try queues.webhooks(),
                notificationWindow: try settings.notificationWindow().map {
                    WorkerGraph.NotificationWindow(length: $0, summaries: try queues.fanout())
                })
        }
        if roles.contains(.ingest) {
            guard let input = connections.ingestInput else {
                preconditionFailure("the ingest role needs Connections built with ingest: true")
            }
            ingest = WorkerGraph.Ingest(
                input: input, publisher: connections.mqtt, lanes: try settings.ingestConcurrency(),
                batchLimit: try settings.messageBatchLimit(), commitInterval: try settings.ingestCommitInterval(),
                keepsSubscription: settings.string(SettingKeys.Jobs.ingestSession) != nil,
                senders: try settings.ingestSender(), senderStampKey: try settings.senderStampKey(),
                // EMQX has no Parley plugin to report to.
                progressEvery: connections.emqx == nil ? .milliseconds(100) : nil,
                payloadLimit: try settings.ingestPayloadLimit(), abuseLimits: try settings.abuseLimits(),
                recentWriters: connections.recentWriters, messageHook: try settings.messageHook())
        }
        if roles.contains(.fanout) {
            fanout = WorkerGraph.Fanout(
                publisher: connections.mqtt, queue: try queues.fanout(), consumers: try settings.fanoutConsumers(),
                chunkSize: try settings.fanoutChunkSize(), pushJobs: try queues.push(),
                pushContent: try settings.pushContent())
        }
        if roles.contains(.push) {
            push = WorkerGraph.Push(
                queue: try queues.push(),
                senders: Adapters.pushSenders(try settings.pushProviders(), client: pushClient))
        }
        if roles.contains(.media) {
            media = WorkerGraph.Media(
                queue: try queues.media(), store: try blobStore(settings),
                processor: ToolMediaProcessor(runner: try settings.toolRunner()),
                workDirectory: try Self.workDirectory(settings), orphanGrace: try settings.orphanGrace())
        }
        if roles.contains(.webhooks) {
            webhooks = WorkerGraph.Webhooks(
                queue: try queues.webhooks(),
                transport: OutboundHTTPClient(
                    rule: try settings.outboundRule(), resolver: SystemAddressResolver(),
                    caFile: settings.string(SettingKeys.Outbound.caFile)),
                messageHook: try settings.messageHook())
        }
        if roles.contains(.maintenance) {
            maintenance = WorkerGraph.Maintenance(
                queue: try queues.maintenance(),
                work: WorkerGraph.MaintenanceWork(
                    store: try blobStore(settings), runner: try settings.toolRunner(),
                    workDirectory: try Self.workDirectory(settings),
                    retentionDefaultDays: try settings.retentionDefaultDays(),
                    logRetentionDays: try settings.logRetentionDays(),
                    interval: try settings.maintenanceInterval()))
        }
    }

    /// The configured store of uploads (media and maintenance each hold one; it keeps no state).
    private func blobStore(_ settings: Settings) throws -> any BlobStore {
        try Adapters.blobStore(try settings.blobStoreChoice(), database: postgres)
    }

    /// Where media tools and exports write their work files; created if missing.
    private static func workDirectory(_ settings: Settings) throws -> String {
        let workDirectory = try settings.mediaWorkDirectory()
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        return workDirectory
    }

    /// The queues between the roles, each configured by the settings of the roles that use it.
    private struct Queues {
        let settings: Settings
        let redis: RedisConnectionPool

        /// Serial, and its order held through a short failure (a member's notifications in order).
        func fanout() throws -> RedisJobQueue {
            RedisJobQueue(name: QueueName.fanout, pool: redis, configuration: try Self.orderHeld(settings.jobQueue()))
        }

        /// Pushes wait on slow providers: more in flight, and a longer lease than other jobs.
        func push() throws -> RedisJobQueue {
            var configuration = try settings.jobQueue()
            configuration.concurrency = try settings.pushConcurrency()
            configuration.batchSize = configuration.concurrency
            configuration.blockFor = .seconds(1)
            configuration.visibilityTimeout = try settings.pushVisibilityTimeout()
            return RedisJobQueue(name: QueueName.push, pool: redis, configuration: configuration)
        }

        /// Tools may take their whole time limit: a job must not be reclaimed meanwhile.
        func media() throws -> RedisJobQueue {
            var configuration = try settings.jobQueue()
            configuration.visibilityTimeout = max(configuration.visibilityTimeout, .seconds(300))
            return RedisJobQueue(name: QueueName.media, pool: redis, configuration: configuration)
        }

        /// Serial, and its order held through a short failure: a room's events are recorded, and
        /// sent, in their order.
        func webhooks() throws -> RedisJobQueue {
            RedisJobQueue(name: QueueName.webhooks, pool: redis, configuration: try Self.orderHeld(settings.jobQueue()))
        }

        /// A failed job tried again in place for as long as no other consumer can claim it.
        static func orderHeld(_ configuration: RedisJobQueue.Configuration) -> RedisJobQueue.Configuration {
            var configuration = configuration
            configuration.holdOrderFor = configuration.visibilityTimeout * 2 / 3
            return configuration
        }

        func maintenance() throws -> RedisJobQueue {
            RedisJobQueue(name: QueueName.maintenance, pool: redis, configuration: try settings.jobQueue())
        }
    }
}
