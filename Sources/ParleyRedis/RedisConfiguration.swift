/// How Parley reaches Redis (queues, rate limits, caches, invalidation).
public struct RedisConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Secret. `AUTH` is sent on connect when set.
    public var password: String?
    /// The logical database (`SELECT`).
    public var database: Int
    /// Most connections one process keeps open.
    public var maximumConnections: Int
    public var connectTimeout: Duration
    /// How long a command may take before its connection is declared broken. Blocking
    /// commands (`XREADGROUP BLOCK`) must block for less than this.
    public var commandTimeout: Duration
    /// Redis Sentinels to ask where the primary is (``masterName``); empty: `host` and `port`
    /// are the primary. Every new connection asks, so the pool follows a failover.
    public var sentinels: [(host: String, port: Int)] = []
    public var masterName = "parley"
    /// Secret. `AUTH` to the Sentinels, when they require it.
    public var sentinelPassword: String?
    /// Replicas that must hold a queued job before its enqueue succeeds (`WAIT`), so a
    /// failover does not lose it; 0: the primary alone.
    public var waitReplicas = 0
    public var waitTimeout: Duration = .seconds(1)

    public init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        password: String? = nil,
        database: Int = 0,
        maximumConnections: Int = 16,
        connectTimeout: Duration = .seconds(2),
        commandTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }
}
