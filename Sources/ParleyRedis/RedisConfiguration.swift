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
