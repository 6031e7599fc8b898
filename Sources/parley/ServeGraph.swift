import Logging
import ParleyAPI
import ParleyCore
import ParleyIdentity
import ParleyMQTT
import ParleyOutbound
import ParleyPostgres
import ParleyRedis
import ParleyRuntime

/// `parley serve`'s object graph, read top to bottom: the adapters chosen from the settings
/// and the connections the process holds, wired into the API by ``features(_:cache:)``, which
/// the tests call too with adapters of their choosing.
struct ServeGraph {
    let routes: ParleyRoutes
    /// Keeps this instance's session cache in step with revocations made anywhere.
    let revocationListener: RedisSubscriber
    /// Reads the issuers' keys over HTTPS (closed when the process stops); nil when no
    /// issuer's keys are at a URL.
    let issuerKeyFetcher: HTTPSKeyFetcher?

    /// What the API's features are built over: the connections and the values `parley serve`
    /// reads from its settings (a test chooses its own).
    struct Parts: Sendable {
        var postgres: PostgresPool
        var redis: RedisConnectionPool
        /// Ends revoked sessions at the broker.
        var broker: any BrokerSessionControl
        var mqttKey: MQTTTokenKey
        var endpoint: MQTTEndpoint
        var accountPolicy: AccountPolicy
        var bcryptCost: Int
        /// Keeps rate-limit counters apart when several deployments share one Redis.
        var rateLimitNamespace = "parley"
        var fileLinks: FileLinks
        var receiptsMaxMembers = MessageReceipts.defaultMaxMembers
        var sendBatching = SendBatching()
        var roomAddPolicy = RoomAddPolicy.anyone
        var abuseLimits = AbuseLimits()
        /// How long after sending a message may be edited; zero: always.
        var editWindow: Duration = .zero
        var store: any BlobStore
        /// Thumbnail and probe jobs of uploads; nil queues none.
        var mediaJobs: (any JobQueue)?
        /// Erasure and export jobs; nil queues none (the maintenance sweep finds them).
        var maintenanceJobs: (any JobQueue)?
        var uploadLimit: Int64
        /// Who wrote lately, when reads may use PostgreSQL replicas; nil: no replicas.
        var recentWriters: (any RecentWriters)?
        /// The issuers whose tokens sign in; none: no token exchange.
        var issuers: [TrustedIssuer] = []
        /// Their keys, read where their entries say and kept between exchanges.
        var issuerKeys: IssuerKeys?
        /// `PARLEY_AUTH_LINK_VERIFIED_EMAIL`.
        var linkVerifiedEmail = false
        /// Where webhooks may go, checked when they are registered.
        var outboundRule = OutboundRule()
        /// Asked about every new message and edit before it is stored; nil: no hook.
        var messageHook: MessageHookGate?
        var addressResolver: any AddressResolver = SystemAddressResolver()
        var logger: @Sendable (String) -> Logger = { Runtime.logger($0) }
    }

    init(settings: Settings, connections: Connections) throws {
        let mqttKey = try settings.mqttTokenKey()
        var parts = Parts(
            postgres: connections.postgres, redis: connections.redis,
            broker: connections.brokerSessions,
            mqttKey: mqttKey, endpoint: try settings.mqttEndpoint(), accountPolicy: try settings.accountPolicy(),
            bcryptCost: try settings.bcryptCost(), fileLinks: try settings.fileLinks(),
            receiptsMaxMembers: try settings.receiptsMaxMembers(), sendBatching: try settings.sendBatching(),
            roomAddPolicy: try settings.roomAddPolicy(),
            abuseLimits: try settings.abuseLimits(),
            editWindow: try settings.messageEditWindow(),
            store: try Adapters.blobStore(try settings.blobStoreChoice(), database: connections.postgres),
            mediaJobs: RedisJobQueue(
                name: QueueName.media, pool: connections.redis, configuration: try settings.jobQueue()),
            maintenanceJobs: RedisJobQueue(
                name: QueueName.maintenance, pool: connections.redis, configuration: try settings.jobQueue()),
            uploadLimit: try settings.uploadLimit(), recentWriters: connections.recentWriters,
            issuers: try settings.trustedIssuers(), linkVerifiedEmail: try settings.linkVerifiedEmail(),
            outboundRule: try settings.outboundRule(), messageHook: try settings.messageHook())
        let cache = SessionCache(lifetime: try settings.sessionCacheLifetime())
        let (server, senders) = (try settings.serverIdentity(), try settings.ingestSender())
        let (readinessTimeout, trustedProxies) = (try settings.http().readinessTimeout, try settings.trustedProxies())
        let redis = try settings.redis()
        // Last of what may throw: an HTTP client must be shut down once it exists.
        issuerKeyFetcher = try Adapters.issuerKeyFetcher(
            for: parts.issuers, caFile: settings.issuersCAFile, rule: parts.outboundRule)
        parts.issuerKeys = IssuerKeys(fetcher: IssuerKeySources(https: issuerKeyFetcher))

        // The broker's questions (may this client connect, publish, subscribe) are answered
        // from the same sessions and rooms the API keeps.
        let broker = BrokerAuthController(
            authority: BrokerAuthority(
                key: mqttKey, server: server,
                sessions: PostgresSessionRepository(database: parts.postgres, logger: Runtime.logger("sessions")),
                rooms: parts.rooms(Runtime.logger("rooms")),
                privacy: PostgresPrivacyRepository(database: parts.postgres, logger: Runtime.logger("privacy")),
                senders: senders))
        routes = ParleyRoutes(
            probes: connections.probes, readinessTimeout: readinessTimeout,
            registry: Runtime.metrics, features: Self.features(parts, cache: cache), broker: broker,
            trustedProxies: trustedProxies)

        revocationListener = RedisSubscriber(
            configuration: redis, channel: RedisSessionRevocationBus.channel,
            logger: Runtime.logger("revocations"), onListening: { cache.setTrusted($0) },
            onMessage: { cache.revoke(message: $0) })
    }

    /// The features behind `/v1` over `parts`; `cache` is this instance's session cache.
    static func features(_ parts: Parts, cache: SessionCache) -> ParleyRoutes.Features {
        let postgres = parts.postgres
        let logger = parts.logger

        // Accounts and sessions.
        let users = PostgresUserRepository(database: postgres, logger: logger("users"), fileLinks: parts.fileLinks)
        let sessions = PostgresSessionRepository(database: postgres, logger: logger("sessions"))
        let hasher = BcryptPasswordHasher(cost: parts.bcryptCost)
        // Issuers' users become Parley users by one rule (token exchange, server API).
        let provisioning = IdentityProvisioning(
            identities: PostgresIdentityRepository(
                database: postgres, logger: logger("identities"), fileLinks: parts.fileLinks),
            users: users, linkVerifiedEmail: parts.linkVerifiedEmail)
        let tokenExchange = parts.issuerKeys.flatMap { keys in
            parts.issuers.isEmpty
                ? nil
                : TokenExchange(
                    verifier: IssuerTokenVerifier(issuers: parts.issuers, keys: keys), provisioning: provisioning)
        }
        let accounts = AccountService(
            users: users, sessions: sessions, hasher: hasher,
            limiter: RedisRateLimiter(pool: parts.redis, namespace: parts.rateLimitNamespace),
            revocations: RedisSessionRevocationBus(pool: parts.redis), broker: parts.broker, mqttKey: parts.mqttKey,
            policy: parts.accountPolicy, revokedLocally: { cache.revoke(sessions: $0) }, tokenExchange: tokenExchange)

        // Rooms, messages and files.
        let roomRepository = parts.rooms(logger("rooms"))
        let messageRepository = parts.messages(logger("messages"))
        let bucketStore = RedisTokenBuckets(pool: parts.redis, namespace: parts.rateLimitNamespace)
        // A server key's requests each ask alone and come in concurrent bursts, where the first
        // ask's lease for idleness would leave the others short: no idle lease.
        let keyBuckets = LeasedTokenBuckets(store: bucketStore)
        let rooms = RoomService(
            rooms: roomRepository, messages: messageRepository, batching: parts.sendBatching,
            addPolicy: parts.roomAddPolicy, limits: parts.abuseLimits,
            buckets: Adapters.roomBuckets(bucketStore),
            hook: parts.messageHook,
            bots: BotRoster(load: PostgresBotRepository(database: postgres, logger: logger("bots")).ids))
        let messageActions = MessageActionService(
            rooms: roomRepository, actions: messageRepository, editWindow: parts.editWindow, hook: parts.messageHook)

        let files = PostgresFileRepository(database: postgres, logger: logger("files"))
        // The server API's keys and the audit log of it and the admin routes.
        let keys = PostgresAPIKeyRepository(database: postgres, logger: logger("api-keys"))
        let keyIssuer = parts.issuers.first?.issuer ?? "parley"
        let webhooks = WebhookService(
            webhooks: PostgresWebhookRepository(database: postgres, logger: logger("webhooks")),
            rule: parts.outboundRule, resolver: parts.addressResolver)

        let receipts = Adapters.receipts(rooms: rooms, database: postgres, logger: logger("receipts"))

        return ParleyRoutes.Features(
            accounts: accounts, users: users, sessions: sessions, cache: cache, endpoint: parts.endpoint,
            directory: DirectoryService(
                users: users, directory: PostgresDirectoryRepository(database: postgres, logger: logger("directory")),
                hasher: hasher),
            blocks: BlockService(blocks: roomRepository),
            privacy: PrivacyService(privacy: PostgresPrivacyRepository(database: postgres, logger: logger("privacy"))),
            moderation: ModerationService(
                reports: PostgresReportRepository(
                    database: postgres, logger: logger("moderation"), fileLinks: parts.fileLinks),
                rooms: rooms, actions: messageRepository, accounts: accounts),
            rooms: rooms, messageActions: messageActions,
            notificationSettings: PostgresPushRepository(database: postgres, logger: logger("push")),
            files: files, store: parts.store, links: parts.fileLinks, mediaJobs: parts.mediaJobs,
            uploadLimit: parts.uploadLimit,
            erasure: ErasureService(
                erasure: PostgresErasureRepository(rooms: roomRepository),
                exports: PostgresExportRepository(database: postgres, logger: logger("exports")), accounts: accounts,
                rooms: rooms, jobs: parts.maintenanceJobs),
            avatars: AvatarService(avatars: roomRepository, files: files, rooms: rooms),
            search: SearchService(search: roomRepository, rooms: rooms),
            keys: APIKeyService(keys: keys, buckets: keyBuckets, defaultIssuer: keyIssuer),
            audit: keys, provisioning: provisioning,
            webhooks: webhooks,
            bots: BotService(
                bots: PostgresBotRepository(database: postgres, logger: logger("bots")), accounts: accounts,
                webhooks: webhooks, keyIssuer: keyIssuer),
            receipts: receipts.service, background: [receipts.coalescer], recentWriters: parts.recentWriters)
    }
}
