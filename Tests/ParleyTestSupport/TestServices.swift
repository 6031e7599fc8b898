import Foundation
import ParleyMQTT
import ParleyPostgres
import ParleyRedis

/// PostgreSQL, Redis and mosquitto as started by `deploy/local/services` for the tests.
///
/// `shared` is the suite's instance, started by `deploy/local/test`. Tests that stop and
/// restart a server use a private instance of their own so that they never disturb others.
public struct TestServices: Sendable {
    public let directory: String
    let values: [String: String]

    /// The instance `deploy/local/test` started.
    public static func shared() throws -> TestServices {
        guard let directory = ProcessInfo.processInfo.environment["PARLEY_TEST_SERVICES_DIR"] else {
            throw TestEnvironmentError(
                "PARLEY_TEST_SERVICES_DIR is not set: run the tests with deploy/local/test")
        }
        return try TestServices(directory: directory)
    }

    /// A new instance on free ports, for a test that stops and restarts servers. Call
    /// ``shutdown()`` at the end (`deploy/local/test` also stops leftovers).
    public static func makePrivate() async throws -> TestServices {
        let work = ProcessInfo.processInfo.environment["PARLEY_TEST_WORK_DIR"] ?? NSTemporaryDirectory()
        let directory = "\(work)/private-\(UUID().uuidString.prefix(8))"
        try await privateStarts.run { try await runScript(["up", directory]) }
        return try TestServices(directory: directory)
    }

    /// Private instances are made one at a time. Each runs `initdb`, makes a certificate and
    /// starts three servers; the tests that want one all start in the run's first seconds, and
    /// four made at once put 24–47 runnable tasks on two cores. Beside `stress-ng` an event loop
    /// of the test process then got 0.04 s of CPU in 3 s (the watchdog's stall) and an HTTP/2
    /// push test passed its 10 s deadline.
    static let privateStarts = OneAtATime()

    init(directory: String) throws {
        self.directory = directory
        var values: [String: String] = [:]
        for file in ["ports.env", "secrets.env"] {
            let text = try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
            }
        }
        self.values = values
    }

    public func port(_ name: String) -> Int { Int(values["PARLEY_LOCAL_\(name)_PORT"] ?? "") ?? 0 }
    /// A line of the instance's `ports.env` or `secrets.env`, by its full name.
    public func value(_ name: String) -> String? { values[name] }
    public func secret(_ name: String) -> String { values["PARLEY_LOCAL_\(name)_PASSWORD"] ?? "" }
    public var certificatePath: String { "\(directory)/tls/server.crt" }
    public var keyPath: String { "\(directory)/tls/server.key" }

    public func postgres(database: String = "parley") -> PostgresConfiguration {
        PostgresConfiguration(
            port: port("POSTGRES"), user: "parley", password: secret("POSTGRES"), database: database, tls: .disable,
            maximumConnections: 8, connectTimeout: .seconds(2))
    }

    public func redis(password: String? = nil) -> RedisConfiguration {
        RedisConfiguration(
            port: port("REDIS"), password: password ?? secret("REDIS"), maximumConnections: 4,
            connectTimeout: .seconds(1), commandTimeout: .seconds(3))
    }

    public func mqtt(clientID: String = "test-\(UUID().uuidString.prefix(8))", tls: Bool = false) -> MQTTConfiguration {
        MQTTConfiguration(
            port: tls ? port("MQTT_TLS") : port("MQTT"), username: "parley-server", password: secret("MQTT"),
            clientID: clientID, keepAlive: .seconds(5), tls: tls, caFile: tls ? certificatePath : nil,
            acknowledgementTimeout: .seconds(5))
    }

    /// A client of the broker with Parley's server credentials, started and connected.
    public func connectedMQTTClient() async throws -> MQTTClient {
        let client = try MQTTClient(configuration: mqtt(), logger: .quiet)
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        return client
    }

    /// Stops one server (`postgres`, `redis`, `mosquitto`).
    public func stop(_ service: String) async throws { try await Self.runScript(["stop", directory, service]) }
    /// Stops one server as a crash would (PostgreSQL's immediate mode, SIGKILL for the others).
    public func crash(_ service: String) async throws { try await Self.runScript(["crash", directory, service]) }
    public func start(_ service: String) async throws { try await Self.runScript(["start", directory, service]) }
    /// Stops this instance; a private one's directory goes too (its data is nobody else's).
    public func shutdown() async throws {
        try await Self.runScript(["stop", directory])
        if (directory as NSString).lastPathComponent.hasPrefix("private-") {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Configures this instance's mosquitto for Parley's plugin built at `plugin` (asking the
    /// internal listener on `PARLEY_LOCAL_INTERNAL_PORT`) and restarts it.
    public func usePlugin(_ plugin: String) async throws {
        try await Self.runScript(["plugin", directory, plugin])
        try await stop("mosquitto")
        try await start("mosquitto")
    }

    /// Empties one Redis logical database: a test whose processes use one of their own starts
    /// without the jobs an earlier run that ended midway left there.
    public func emptyRedis(database: Int) async throws {
        var configuration = redis()
        configuration.database = database
        let pool = RedisConnectionPool(configuration: configuration, logger: .quiet)
        _ = try await pool.send("FLUSHDB")
        await pool.close()
    }

    /// Starts a replica of this instance's Redis and three Sentinels watching it as
    /// `parley` (`deploy/local/sentinel`); ``shutdown()`` stops them too.
    public func startSentinels(replicaPort: Int, sentinelPorts: [Int]) async throws {
        try await Self.runScript(
            ["start", directory, String(replicaPort)] + sentinelPorts.map(String.init), script: "sentinel")
    }

    /// Starts a streaming replica of this instance's PostgreSQL on `port`
    /// (`deploy/local/replica`); ``shutdown()`` stops it too.
    public func startReplica(port: Int) async throws {
        try await Self.runScript(["start", directory, String(port)], script: "replica")
    }

    /// Runs `deploy/local/services`, or another script beside it.
    @discardableResult
    static func runScript(_ arguments: [String], script name: String = "services") async throws -> Subprocess.Result {
        guard let services = ProcessInfo.processInfo.environment["PARLEY_TEST_SERVICES_SCRIPT"] else {
            throw TestEnvironmentError("PARLEY_TEST_SERVICES_SCRIPT is not set: run the tests with deploy/local/test")
        }
        let script = URL(fileURLWithPath: services).deletingLastPathComponent().appendingPathComponent(name).path
        let result = try await Subprocess.run(script, arguments)
        guard result.status == 0 else {
            throw TestEnvironmentError("\(name) \(arguments.joined(separator: " ")) failed: \(result.standardError)")
        }
        return result
    }
}

public struct TestEnvironmentError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs the bodies given to it one after another, in the order they arrive.
actor OneAtATime {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}
