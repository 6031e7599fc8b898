import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis

/// `parley serve`'s object graph, read top to bottom: the adapters chosen from the settings
/// and the connections the process holds, wired into the API by `ParleyRoutes.Features`
/// (which the tests build from the same ports).
struct ServeGraph {
    let routes: ParleyRoutes
    /// Keeps this instance's session cache in step with revocations made anywhere.
    let revocationListener: RedisSubscriber

    init(settings: Settings, dependencies: Dependencies) throws {
        let postgres = dependencies.postgres
        let redis = dependencies.redis

        // Accounts and sessions.
        let users = PostgresUserRepository(database: postgres, logger: Runtime.logger("users"))
        let sessions = PostgresSessionRepository(database: postgres, logger: Runtime.logger("sessions"))
        let hasher = BcryptPasswordHasher(cost: try settings.bcryptCost())
        let cache = SessionCache(lifetime: try settings.sessionCacheLifetime())
        let accounts = AccountService(
            users: users, sessions: sessions, hasher: hasher, limiter: RedisRateLimiter(pool: redis),
            revocations: RedisSessionRevocationBus(pool: redis),
            broker: MQTTBrokerSessionControl(client: dependencies.mqtt, logger: Runtime.logger("broker")),
            mqttKey: try settings.mqttTokenKey(), policy: try settings.accountPolicy(),
            revokedLocally: { cache.revoke(sessions: $0) })

        // Rooms, messages and files.
        let fileLinks = try settings.fileLinks()
        let roomRepository = PostgresRoomRepository(
            database: postgres, logger: Runtime.logger("rooms"), fileLinks: fileLinks)
        let rooms = RoomService(rooms: roomRepository, batching: try settings.sendBatching())

        let features = ParleyRoutes.Features(
            accounts: accounts, users: users, sessions: sessions,
            directory: PostgresDirectoryRepository(database: postgres, logger: Runtime.logger("directory")),
            hasher: hasher, cache: cache, endpoint: try settings.mqttEndpoint(), rooms: rooms,
            notificationSettings: PostgresPushRepository(database: postgres, logger: Runtime.logger("push")),
            files: PostgresFileRepository(database: postgres, logger: Runtime.logger("files")),
            store: try settings.blobStore(database: postgres), links: fileLinks,
            mediaJobs: RedisJobQueue(name: "media", pool: redis, configuration: try settings.jobQueue()),
            uploadLimit: try settings.uploadLimit())
        let broker = BrokerAuthController(
            authority: BrokerAuthority(
                key: try settings.mqttTokenKey(), server: try settings.serverIdentity(), sessions: sessions,
                rooms: roomRepository))
        routes = ParleyRoutes(
            probes: dependencies.probes, readinessTimeout: try settings.http().readinessTimeout,
            registry: Runtime.metrics, features: features, broker: broker)

        revocationListener = RedisSubscriber(
            configuration: try settings.redis(), channel: RedisSessionRevocationBus.channel,
            logger: Runtime.logger("revocations"), onListening: { cache.setTrusted($0) },
            onMessage: { cache.revoke(message: $0) })
    }
}
