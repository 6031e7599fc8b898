import NIOSSL
import PostgresNIO

/// How Parley reaches PostgreSQL, the only store of record.
public struct PostgresConfiguration: Sendable {
    /// How the connection is encrypted.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP; for loopback and trusted private networks only.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    public var host: String
    public var port: Int
    public var user: String
    /// Secret.
    public var password: String?
    public var database: String
    public var tls: TLSMode
    /// Most connections one process keeps open.
    public var maximumConnections: Int
    /// How long a connection stays open without work: long, so a rise in load finds the
    /// connections an earlier one opened. Opening one costs a SCRAM exchange and, on each
    /// statement's first use, its planning (9 ms for the room list); a pool that had shrunk
    /// opened 15 at once (see <doc:PostgresNIO>).
    public var idleTimeout: Duration
    /// How long a connection stays idle before the pool checks it with a query; zero: never.
    /// Each time a connection falls idle, PostgresNIO's pool arms a timer for it (a task group
    /// of two tasks and a libdispatch timer), cancelled when the connection is leased again:
    /// under load that is every statement (see <doc:PostgresNIO>).
    public var keepAlive: Duration
    public var connectTimeout: Duration
    /// How long a statement may take to start answering before it is given up on (a
    /// connection closed under it never answers).
    public var answerTimeout: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 5432,
        user: String = "parley",
        password: String? = nil,
        database: String = "parley",
        tls: TLSMode = .prefer,
        maximumConnections: Int = 20,
        idleTimeout: Duration = .seconds(3600),
        keepAlive: Duration = .zero,
        connectTimeout: Duration = .seconds(5),
        answerTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.keepAlive = keepAlive
        self.connectTimeout = connectTimeout
        self.answerTimeout = answerTimeout
    }

    /// The same server and credentials, another database (tests, and creating databases).
    public func with(database: String) -> PostgresConfiguration {
        var copy = self
        copy.database = database
        return copy
    }

    var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch self.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectionIdleTimeout = idleTimeout
        configuration.options.keepAliveBehavior = keepAlive > .zero ? .init(frequency: keepAlive) : nil
        configuration.options.connectTimeout = connectTimeout
        configuration.options.additionalStartupParameters = [
            ("application_name", "parley"),
            // Prepared statements are Parley's hot path, keyed by ids: left to choose, PostgreSQL
            // kept planning some of them afresh on every execution (1 ms against 0.1 ms to run).
            ("plan_cache_mode", "force_generic_plan"),
            // A generic plan's estimates can pass `jit_above_cost`, and compiling a statement
            // took 40 ms where running it took under 1 (the pushes' recipients, measured with
            // EXPLAIN ANALYZE): short statements never repay JIT.
            ("jit", "off"),
        ]
        return configuration
    }
}
