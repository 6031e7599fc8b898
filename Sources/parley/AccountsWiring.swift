import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ServiceLifecycle

/// The account feature, wired from concrete adapters.
struct AccountsWiring {
    let api: AccountsAPI
    /// Keeps this instance's session cache in step with revocations made anywhere.
    let revocationListener: RedisSubscriber

    init(settings: Settings, dependencies: Dependencies) throws {
        let users = PostgresUserRepository(database: dependencies.postgres, logger: Runtime.logger("users"))
        let sessions = PostgresSessionRepository(database: dependencies.postgres, logger: Runtime.logger("sessions"))
        let hasher = BcryptPasswordHasher(cost: try settings.bcryptCost())
        let cache = SessionCache(lifetime: try settings.sessionCacheLifetime())
        let accounts = AccountService(
            users: users, sessions: sessions, hasher: hasher, limiter: RedisRateLimiter(pool: dependencies.redis),
            revocations: RedisSessionRevocationBus(pool: dependencies.redis),
            broker: MQTTBrokerSessionControl(client: dependencies.mqtt, logger: Runtime.logger("broker")),
            mqttKey: try settings.mqttTokenKey(), policy: try settings.accountPolicy(),
            revokedLocally: { cache.revoke(sessions: $0) })
        api = AccountsAPI(
            accounts: accounts, users: users, sessions: sessions,
            directory: PostgresDirectoryRepository(
                database: dependencies.postgres, logger: Runtime.logger("directory")),
            hasher: hasher, cache: cache, endpoint: try settings.mqttEndpoint())
        revocationListener = RedisSubscriber(
            configuration: try settings.redis(), channel: RedisSessionRevocationBus.channel,
            logger: Runtime.logger("revocations"), onListening: { cache.setTrusted($0) },
            onMessage: { cache.revoke(message: $0) })
    }
}
