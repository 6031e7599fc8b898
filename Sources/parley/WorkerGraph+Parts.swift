import Logging
import ParleyCore
import ParleyMQTT
import ParleyMedia
import ParleyPostgres
import ParleyPush
import ParleyRedis

extension WorkerGraph {
    /// What the worker's roles are built over: the connections and, per role, the adapters
    /// and values `parley worker` reads from that role's own settings
    /// (``init(roles:settings:connections:pushClient:)``); a test chooses its own. A role
    /// runs when its part is set.
    struct Parts: Sendable {
        var postgres: PostgresPool
        var redis: RedisConnectionPool
        var fileLinks: FileLinks
        var receiptsMaxMembers = MessageReceipts.defaultMaxMembers
        /// Names this process's consumers in the queues' consumer groups.
        var process: String
        var logger: @Sendable (String) -> Logger = { Runtime.logger($0) }
        var outbox: Outbox?
        var ingest: Ingest?
        var fanout: Fanout?
        var push: Push?
        var media: Media?
        var maintenance: Maintenance?
        var webhooks: Webhooks?
    }

    /// Publishes committed room events (the transactional outbox) and queues their fan-out.
    struct Outbox: Sendable {
        var publisher: any EventPublisher
        /// Where the relay queues fan-out jobs: the fan-out role's queue.
        var fanoutJobs: any JobQueue
        /// How long the relay may lag before its probe says it is stalled.
        var stallLimit: Duration
        /// Where the relay queues the events some webhook subscribes to: the webhooks role's
        /// queue; nil queues none.
        var webhookJobs: (any JobQueue)? = nil
        /// With the fan-out role in the same process, the relay publishes the copies of rooms
        /// whose readers it keeps itself (``InlineFanout``); off: every copy goes through the queue.
        var plansInline = true
        /// Busy rooms' notification copies held for one summary per window; nil: every copy at once.
        var notificationWindow: NotificationWindow? = nil
    }

    /// `PARLEY_NOTIFICATION_WINDOW_MILLISECONDS` (``ParleyCore/NotificationWindows``).
    struct NotificationWindow: Sendable {
        var length: Duration
        /// Where the relay parks each held room's summary and releases it: the fan-out's queue.
        var summaries: any ParkedJobs
    }

    /// Stores client input from `chat-in` (a shared subscription), in lanes of batches.
    struct Ingest: Sendable {
        /// The broker connection that reads `chat-in` and acknowledges a message once stored.
        var input: MQTTClient
        /// Where rejections and read markers go; its writes never wait for the input.
        var publisher: any EventPublisher
        var lanes: Int
        var batchLimit: Int
        var commitInterval: Duration
        /// The input client keeps a named session across restarts (`ingest.session`).
        var keepsSubscription: Bool
        var senders: ChatInSender
        var senderStampKey: SenderStampKey?
        /// How often the ingest reports its progress to the plugin; nil: no plugin (EMQX).
        var progressEvery: Duration?
        var payloadLimit: Int
        var abuseLimits: AbuseLimits
        /// Keeps rate-limit counters apart when several deployments share one Redis.
        var rateLimitNamespace = "parley"
        /// Who wrote lately, when reads may use PostgreSQL replicas; nil: no replicas.
        var recentWriters: (any RecentWriters)?
        /// Asked about every batch before it is stored; nil: no hook.
        var messageHook: MessageHookGate? = nil
    }

    /// Copies events to the members' notification topics and queues their pushes.
    struct Fanout: Sendable {
        var publisher: any EventPublisher
        var queue: RedisJobQueue
        /// How many consumers of the queue this process runs.
        var consumers: Int
        var chunkSize: Int
        /// Where push jobs go: the push role's queue; nil queues none.
        var pushJobs: (any JobQueue)?
        var pushContent = PushComposer.Content.preview
        /// At most one read's silent update per user and room this often (the last always sent).
        var readPushInterval: Duration = .seconds(10)
    }

    /// Sends pushes through the configured providers.
    struct Push: Sendable {
        var queue: RedisJobQueue
        var senders: Adapters.PushSenders
    }

    /// Thumbnails and probes of uploads; deletes orphaned uploads.
    struct Media: Sendable {
        var queue: RedisJobQueue
        var store: any BlobStore
        var processor: any MediaProcessor
        /// Where media tools write their work files.
        var workDirectory: String
        var orphanGrace: Duration
    }

    /// Sends the events webhooks subscribe to, lane by lane, with retries.
    struct Webhooks: Sendable {
        var queue: RedisJobQueue
        var transport: any WebhookTransport
        var policy = WebhookRetryPolicy()
        /// Reviews bots' answers before they are said, as every new message is.
        var messageHook: MessageHookGate? = nil
    }

    /// Erasing deleted accounts and rooms, data exports, retention purges.
    struct Maintenance: Sendable {
        /// Where the role's consumer reads its jobs, and its work queues more.
        var queue: RedisJobQueue
        var work: MaintenanceWork
    }

    /// What the maintenance role's handler and sweep work with; a test runs them over a job
    /// queue of its own (``WorkerGraph/maintenanceWork(_:_:jobs:)``).
    struct MaintenanceWork: Sendable {
        var store: any BlobStore
        /// Runs `zip` for exports.
        var runner: ToolRunner
        /// Where exports are built.
        var workDirectory: String
        var retentionDefaultDays: Int?
        /// Days finished webhook deliveries and audit entries are kept.
        var logRetentionDays = (deliveries: 30, audit: 365)
        /// How often the sweep looks for what the jobs missed.
        var interval: Duration
        /// Rows one erasure job removes before it queues its continuation.
        var stepLimit = 500
    }
}
