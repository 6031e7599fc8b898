import Logging
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ServiceLifecycle

/// The connections a server process holds: PostgreSQL, Redis and the broker.
///
/// The one place concrete adapters are chosen; `serve` and `worker` wire the rest on top.
struct Dependencies {
    let postgres: PostgresPool
    let redis: RedisConnectionPool
    let mqtt: MQTTClient

    init(settings: Settings, role: String) throws {
        postgres = PostgresPool(configuration: try settings.postgres(), logger: Runtime.logger("postgres"))
        redis = RedisConnectionPool(configuration: try settings.redis(), logger: Runtime.logger("redis"))
        mqtt = try MQTTClient(configuration: try settings.mqtt(role: role), logger: Runtime.logger("mqtt"))
    }

    /// What `/health/ready` checks.
    var probes: [any DependencyProbe] {
        [PostgresProbe(database: postgres), RedisProbe(pool: redis), MQTTProbe(client: mqtt)]
    }

    /// In start order; a `ServiceGroup` stops them in reverse, after the listeners drained.
    var services: [any Service] { [postgres, redis, mqtt] }

    /// Runs `services` after the dependencies, until SIGTERM or SIGINT, then drains and stops.
    func run(with services: [any Service], logger: Logger) async throws {
        let all = self.services + services
        let group = ServiceGroup(
            configuration: .init(
                services: all.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}
