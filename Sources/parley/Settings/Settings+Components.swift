import Foundation
import Logging
import ParleyAPI
import ParleyEMQX
import ParleyMQTT
import ParleyPostgres
import ParleyRedis

/// One reader per component configuration, from the keys of ``SettingKeys``.
extension Settings {
    func postgres() throws -> PostgresConfiguration {
        typealias K = SettingKeys.Postgres
        guard let tls = PostgresConfiguration.TLSMode(rawValue: try required(string(K.tls), K.tls)) else {
            throw SettingsError.invalid(K.tls, expected: "disable, prefer or require")
        }
        return PostgresConfiguration(
            host: try required(string(K.host), K.host),
            port: try required(port(K.port), K.port),
            user: try required(string(K.user), K.user),
            password: string(K.password),
            database: try required(string(K.database), K.database),
            tls: tls,
            maximumConnections: try required(int(K.maxConnections, in: 1...1000), K.maxConnections),
            idleTimeout: try positiveSeconds(K.idleTimeout),
            keepAlive: try required(seconds(K.keepAlive), K.keepAlive),
            connectTimeout: try required(seconds(K.connectTimeout), K.connectTimeout),
            answerTimeout: try required(seconds(K.answerTimeout), K.answerTimeout))
    }

    /// The replicas' settings (the primary's but for the address), with the lag bound and the
    /// read-your-writes window; nil when none is configured.
    func postgresReplicas() throws -> (replicas: [PostgresConfiguration], maxLag: Duration, window: Duration)? {
        typealias K = SettingKeys.Postgres
        guard string(K.replicas) != nil else { return nil }
        let primary = try postgres()
        let replicas = try addresses(K.replicas).map { address in
            var replica = primary
            (replica.host, replica.port) = address
            return replica
        }
        let maxLag = try required(seconds(K.replicaMaxLag), K.replicaMaxLag)
        let window = try required(seconds(K.readYourWrites), K.readYourWrites)
        // A replica in use may be up to maxLag behind, judged once per monitor pass (500 ms) from
        // a position up to a pass old: the window covers that with room to spare.
        guard window >= maxLag + .seconds(2) else {
            throw SettingsError.invalid(
                K.readYourWrites, expected: "at least PARLEY_POSTGRES_REPLICA_MAX_LAG plus 2 seconds")
        }
        return (replicas, maxLag, window)
    }

    func redis() throws -> RedisConfiguration {
        typealias K = SettingKeys.Redis
        var configuration = RedisConfiguration(
            host: try required(string(K.host), K.host),
            port: try required(port(K.port), K.port),
            password: string(K.password),
            database: try required(int(K.database, in: 0...15), K.database),
            maximumConnections: try required(int(K.maxConnections, in: 1...1000), K.maxConnections),
            commandTimeout: try required(seconds(K.commandTimeout), K.commandTimeout))
        configuration.sentinels = try addresses(K.sentinels)
        configuration.masterName = try required(string(K.masterName), K.masterName)
        configuration.sentinelPassword = string(K.sentinelPassword)
        configuration.waitReplicas = try required(int(K.waitReplicas, in: 0...16), K.waitReplicas)
        return configuration
    }

    /// A `host:port` list, comma-separated; empty when unset.
    func addresses(_ key: SettingKey) throws -> [(host: String, port: Int)] {
        guard let list = string(key) else { return [] }
        return try list.split(separator: ",").map { entry in
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: ":")
            guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else {
                throw SettingsError.invalid(key, expected: "host:port entries separated by commas")
            }
            return (String(parts[0]), port)
        }
    }

    /// - Parameters:
    ///   - role: names the process in its client id (`serve`, `worker`).
    ///   - keptSession: a client id whose session the broker keeps for a day (the ingest's:
    ///     chat-in sent while the worker restarts waits for it); otherwise a new id each start.
    ///   - receiveMaximum: QoS 1 messages the broker may send before their acknowledgements.
    ///     EMQX (5.6 and later) also answers with the lower of it and its `max_inflight` as the
    ///     window for this client's own publishes, so Parley's processes ask 1,000, not 20:
    ///     a relay batch or fan-out chunk goes out at once (mosquitto's window is its
    ///     `max_inflight_messages`, whatever the client asks).
    func mqtt(role: String, keptSession: String? = nil, receiveMaximum: Int = 1_000) throws -> MQTTConfiguration {
        typealias K = SettingKeys.MQTT
        let suffix = UUID().uuidString.prefix(8).lowercased()
        return MQTTConfiguration(
            host: try required(string(K.host), K.host),
            port: try required(port(K.port), K.port),
            username: string(K.username),
            password: string(K.password),
            clientID: keptSession ?? "parley-\(role)-\(suffix)",
            keepAlive: try required(seconds(K.keepAlive), K.keepAlive),
            tls: try bool(K.tls),
            caFile: string(K.caFile),
            tlsInsecure: try bool(K.tlsInsecure),
            sessionExpiry: keptSession == nil ? nil : .seconds(86_400), receiveMaximum: receiveMaximum)
    }

    /// EMQX's management API when `broker.control` is `emqx`; nil for the plugin's `$CONTROL`.
    func emqxAPI() throws -> EMQXManagementAPI.Configuration? {
        typealias K = SettingKeys.MQTT
        switch try required(string(K.control), K.control) {
        case "plugin": return nil
        case "emqx":
            let url = try required(string(K.emqxAPIURL), K.emqxAPIURL)
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme), parsed.host != nil else {
                throw SettingsError.invalid(K.emqxAPIURL, expected: "an http:// or https:// address")
            }
            return EMQXManagementAPI.Configuration(
                baseURL: url, key: try required(string(K.emqxAPIKey), K.emqxAPIKey),
                secret: try required(string(K.emqxAPISecret), K.emqxAPISecret))
        default: throw SettingsError.invalid(K.control, expected: "plugin or emqx")
        }
    }

    /// - Parameter internalPortKey: `internal.port` for `serve`, `worker.internalPort` for `worker`.
    func http(internalPortKey: SettingKey = SettingKeys.HTTP.internalPort) throws -> HTTPConfiguration {
        typealias K = SettingKeys.HTTP
        return HTTPConfiguration(
            host: try required(string(K.host), K.host),
            port: try port(K.port),
            tlsPort: try port(K.tlsPort),
            tlsCertificatePath: string(K.tlsCertificate),
            tlsKeyPath: string(K.tlsKey),
            internalHost: try required(string(K.internalHost), K.internalHost),
            internalPort: try port(internalPortKey),
            idleTimeout: try required(seconds(K.idleTimeout), K.idleTimeout),
            requestHeadTimeout: try positiveSeconds(K.requestHeadTimeout),
            readinessTimeout: try required(seconds(K.readinessTimeout), K.readinessTimeout))
    }

    func trustedProxies() throws -> TrustedProxies {
        let key = SettingKeys.HTTP.trustedProxies
        let cidrs = (string(key) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard let proxies = TrustedProxies(cidrs: cidrs) else {
            throw SettingsError.invalid(key, expected: "comma-separated addresses or CIDRs (10.0.0.0/8, fd00::/8)")
        }
        return proxies
    }

    func logLevel() throws -> Logger.Level {
        let key = SettingKeys.General.logLevel
        guard let level = Logger.Level(rawValue: try required(string(key), key)) else {
            throw SettingsError.invalid(key, expected: "a log level (trace ... critical)")
        }
        return level
    }

    /// Whether log lines are JSON objects (`json`) rather than text (`text`).
    func logsJSON() throws -> Bool {
        let key = SettingKeys.General.logFormat
        switch try required(string(key), key) {
        case "text": return false
        case "json": return true
        default: throw SettingsError.invalid(key, expected: "text or json")
        }
    }

    func bcryptCost() throws -> Int {
        try required(int(SettingKeys.Accounts.bcryptCost, in: 4...31), SettingKeys.Accounts.bcryptCost)
    }

    /// The migrations directory: configured, or found beside the source tree or the install.
    func migrationsDirectory() throws -> URL {
        if let configured = string(SettingKeys.General.migrationsDirectory) {
            return try Self.existingDirectory(URL(fileURLWithPath: configured))
        }
        var candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Migrations")
        ]
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("Migrations"))
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(URL(fileURLWithPath: "/usr/share/parley/migrations"))
        for candidate in candidates where (try? Self.existingDirectory(candidate)) != nil { return candidate }
        throw MigrationError.directoryNotFound(candidates[0].path)
    }

    private static func existingDirectory(_ url: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MigrationError.directoryNotFound(url.path)
        }
        return url
    }
}
