import Logging
import ParleyCore
import ParleyEMQX
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ServiceLifecycle

/// The connections a server process holds: PostgreSQL, Redis and the broker. `serve` and
/// `worker` build their graphs (``ServeGraph``, ``WorkerGraph``) on top.
struct Connections {
    let postgres: PostgresPool
    let redis: RedisConnectionPool
    let mqtt: MQTTClient
    /// The ingest role's own broker connection, which reads `chat-in` and acknowledges it
    /// only once stored (``MQTTClient/acknowledgementGate``); what the ingest publishes goes
    /// through ``mqtt``, whose writes never wait.
    let ingestInput: MQTTClient?
    /// EMQX's management API, where the broker has no Parley plugin to take `$CONTROL`
    /// commands (`broker.control emqx`); nil: the plugin.
    let emqx: EMQXBrokerControl?
    /// Who wrote lately, when reads may use PostgreSQL replicas (`postgres.replicas`); nil: none.
    let recentWriters: (any RecentWriters)?

    /// - Parameter ingest: the process runs the ingest role; its input client keeps the
    ///   session named by `ingest.session`, if set.
    init(settings: Settings, role: String, ingest: Bool = false) throws {
        let replicas = try settings.postgresReplicas()
        postgres = PostgresPool(
            configuration: try settings.postgres(), logger: Runtime.logger("postgres"),
            replicas: replicas.map {
                ReadReplicas(configurations: $0.replicas, maxLag: $0.maxLag, logger: Runtime.logger("postgres"))
            })
        redis = RedisConnectionPool(configuration: try settings.redis(), logger: Runtime.logger("redis"))
        recentWriters = replicas.map { [redis] in RedisRecentWriters(pool: redis, window: $0.window) }
        mqtt = try MQTTClient(configuration: try settings.mqtt(role: role), logger: Runtime.logger("mqtt"))
        ingestInput =
            ingest
            ? try MQTTClient(
                configuration: try settings.mqtt(
                    role: "ingest", keptSession: settings.string(SettingKeys.Jobs.ingestSession),
                    receiveMaximum: IngestConsumer.receiveMaximum),
                logger: Runtime.logger("mqtt")) : nil
        emqx = try settings.emqxAPI().map {
            EMQXBrokerControl(api: EMQXManagementAPI($0), logger: Runtime.logger("broker"))
        }
    }

    /// Ends sessions' clients at the broker.
    var brokerSessions: any BrokerSessionControl {
        emqx ?? MQTTBrokerSessionControl(client: mqtt, logger: Runtime.logger("broker"))
    }

    /// What the outbox relay publishes through: the broker, with the plugin's commands taken
    /// to EMQX's API where there is no plugin.
    var relayPublisher: any EventPublisher {
        emqx.map { EMQXControlPublisher(publishing: mqtt, control: $0) } ?? mqtt
    }

    /// What `/health/ready` checks.
    var probes: [any DependencyProbe] {
        [PostgresProbe(database: postgres), RedisProbe(pool: redis), MQTTProbe(client: mqtt)]
            + (ingestInput.map { [MQTTProbe(client: $0, name: "mqtt-ingest")] } ?? [])
    }

    /// In start order; a `ServiceGroup` stops them in reverse, after the listeners drained.
    var services: [any Service] { [postgres, redis, mqtt] + (ingestInput.map { [$0] } ?? []) }

    /// Runs `services` after the connections, until SIGTERM or SIGINT, then drains and stops.
    /// - Parameter traces: the span exporter (``Traces``), started first and stopped last.
    func run(with services: [any Service], traces: (any Service)? = nil, logger: Logger) async throws {
        let all = (traces.map { [$0] } ?? []) + self.services + services
        var configuration = ServiceGroupConfiguration(
            services: all.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A request or job stuck on a dead connection must not keep a stopping process alive
        // (an orchestrator would wait, then kill it without a word): after 30 s what still
        // runs is cancelled, and work that ignores cancellation ends the process 10 s later.
        configuration.maximumGracefulShutdownDuration = .seconds(30)
        configuration.maximumCancellationDuration = .seconds(10)
        try await ServiceGroup(configuration: configuration).run()
    }
}
