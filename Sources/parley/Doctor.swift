import Foundation
import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyPush
import ParleyRedis
import ParleyRuntime

/// `parley doctor`'s checks, in order: each one line, `ok` with what was found or `FAIL`
/// with what is wrong and which setting to fix.
struct Doctor {
    let settings: Settings
    /// How long a dependency may take to answer.
    var timeout: Duration = .seconds(5)

    struct Finding: Sendable {
        let check: String
        let passed: Bool
        let detail: String

        var line: String { "\(passed ? "ok  " : "FAIL") \(check): \(detail)" }
    }

    /// A failed check: what is wrong, and what to do about it.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ what: String, fix: String) { description = "\(what); \(fix)" }
    }

    /// The findings as each check ends (a dependency's check may take its whole timeout).
    func examine() -> AsyncStream<Finding> {
        AsyncStream { continuation in
            let task = Task {
                for (name, check) in checks {
                    continuation.yield(await run(name, check))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private var checks: [(String, @Sendable () async throws -> String)] {
        [
            ("settings", settingsParse), ("postgres", postgres), ("redis", redis), ("broker", broker),
            ("broker plugin", pluginKey), ("chat-in sender", chatInSender), ("tls", tls),
        ]
    }

    private func run(_ name: String, _ check: () async throws -> String) async -> Finding {
        do {
            return Finding(check: name, passed: true, detail: try await check())
        } catch {
            return Finding(check: name, passed: false, detail: "\(error)")
        }
    }

    /// Builds what `serve` and a worker of every role would run (nothing connects): every
    /// setting of every component is read, push credentials included.
    @Sendable private func settingsParse() async throws -> String {
        let connections = try Connections(settings: settings, role: "doctor", ingest: true)
        _ = try Traces.configuration(settings: settings, process: "doctor")
        let serveGraph = try ServeGraph(settings: settings, connections: connections)
        // Its HTTPS client of the issuers' keys is built, so closed.
        try await serveGraph.issuerKeyFetcher?.shutdown()
        let pushClient = try PushHTTPClient(caFile: settings.string(SettingKeys.Push.caFile))
        do {
            _ = try WorkerGraph(
                roles: Set(WorkerCommand.Role.allCases), settings: settings, connections: connections,
                pushClient: pushClient)
        } catch {
            try? await pushClient.shutdown()
            throw error
        }
        try await pushClient.shutdown()
        return "every setting is valid"
    }

    @Sendable private func postgres() async throws -> String {
        let configuration = try settings.postgres()
        let migrations = try Migration.load(from: try settings.migrationsDirectory())
        try await Runtime.withDatabase(settings, connectTimeout: timeout) { database in
            try await SchemaCheck(database: database, migrations: migrations, logger: Runtime.logger("migrate"))
                .verifyCurrent()
        }
        let address = "\(configuration.user)@\(configuration.host):\(configuration.port)/\(configuration.database)"
        return "\(address) answers; its \(migrations.count) migrations are applied"
    }

    @Sendable private func redis() async throws -> String {
        let configuration = try settings.redis()
        let pool = RedisConnectionPool(configuration: configuration, logger: Runtime.logger("redis"))
        do {
            try await withTimeout(timeout) { try await RedisProbe(pool: pool).probe() }
        } catch {
            throw Problem(
                "Redis at \(configuration.host):\(configuration.port) did not answer PING (\(error))",
                fix: "check PARLEY_REDIS_HOST, PARLEY_REDIS_PORT and PARLEY_REDIS_PASSWORD")
        }
        return "\(configuration.host):\(configuration.port) answers"
    }

    @Sendable private func broker() async throws -> String {
        let configuration = try settings.mqtt(role: "doctor")
        try await connect(configuration) { refusal in
            Problem(
                "the broker at \(configuration.host):\(configuration.port) did not accept Parley's own login"
                    + " as \(configuration.username ?? "(none)")\(refusal)",
                fix: "check PARLEY_MQTT_HOST, PARLEY_MQTT_PORT, PARLEY_MQTT_USERNAME, PARLEY_MQTT_PASSWORD and "
                    + "PARLEY_MQTT_TLS, and the plugin's server_username and server_password")
        }
        return "\(configuration.host):\(configuration.port) accepts \(configuration.username ?? "(none)")"
    }

    /// Logs in as a client would, with a token Parley signs for no user (id 0): only a
    /// plugin holding the same key accepts it.
    @Sendable private func pluginKey() async throws -> String {
        try await connect(try pluginProbe()) { refusal in
            Problem(
                "the broker refused a client token signed with PARLEY_MQTT_TOKEN_KEY\(refusal)",
                fix: "load Parley's plugin in mosquitto and give its plugin_opt_token_key the same key")
        }
        return "the broker's plugin accepts client tokens signed with PARLEY_MQTT_TOKEN_KEY"
    }

    /// Which `PARLEY_INGEST_SENDER` the broker in front supports: `plugin` needs Parley's plugin
    /// (found by its accepting a Parley token), which signs the stamp; `topic` any broker
    /// whose ACL asks Parley. Whether plugin_opt_stamp_key matches is not checked here: only a
    /// user's publish is stamped, and a mismatch shows as chat-in that is never stored.
    @Sendable private func chatInSender() async throws -> String {
        let sender = try settings.ingestSender()
        let runsPlugin = (try? await connect(try pluginProbe()) { Problem($0, fix: "") }) != nil
        switch (sender, runsPlugin) {
        case (.plugin, true):
            return "PARLEY_INGEST_SENDER=plugin: the broker runs Parley's plugin, which signs the sender it stamps "
                + "(its plugin_opt_stamp_key must be PARLEY_MQTT_STAMP_KEY)"
        case (.plugin, false):
            throw Problem(
                "PARLEY_INGEST_SENDER=plugin, but the broker in front does not run Parley's plugin: nothing signs a "
                    + "chat-in sender, so the ingest refuses every chat-in; this broker supports only "
                    + "PARLEY_INGEST_SENDER=topic",
                fix: "load Parley's plugin (plugin_opt_token_key and plugin_opt_stamp_key as Parley's), or set "
                    + "PARLEY_INGEST_SENDER=topic with a broker whose ACL asks Parley")
        case (.topic, true):
            return "PARLEY_INGEST_SENDER=topic: the sender comes from chat-in/{roomUid}/{userId}; the broker runs "
                + "Parley's plugin, so plugin would do as well"
        case (.topic, false):
            return "PARLEY_INGEST_SENDER=topic: the sender comes from chat-in/{roomUid}/{userId}, the only mode a "
                + "broker without Parley's plugin supports"
        }
    }

    /// A client login with a token Parley signs for no user (id 0).
    private func pluginProbe() throws -> MQTTConfiguration {
        var configuration = try settings.mqtt(role: "doctor")
        let clientID = "parley-doctor-\(UUID().uuidString.prefix(8).lowercased())"
        let token = MQTTToken(
            userID: 0, clientID: clientID, sessionID: 0, expiresAt: Int64(Date().timeIntervalSince1970) + 60)
        configuration.clientID = clientID
        configuration.username = "0"
        configuration.password = token.signed(with: try settings.mqttTokenKey())
        return configuration
    }

    @Sendable private func tls() async throws -> String {
        let http = try settings.http()
        guard let port = http.tlsPort else { return "no TLS listener (PARLEY_HTTPS_PORT is empty)" }
        guard let certificate = http.tlsCertificatePath, let key = http.tlsKeyPath else {
            throw Problem(
                "PARLEY_HTTPS_PORT is \(port) without a certificate and key",
                fix: "set PARLEY_TLS_CERTIFICATE and PARLEY_TLS_KEY, or empty PARLEY_HTTPS_PORT")
        }
        let files = try TLSFiles.check(certificate: certificate, key: key)
        let days = Int(files.expiresAt.timeIntervalSinceNow / 86_400)
        guard files.expiresAt > Date() else {
            throw Problem("the certificate \(certificate) expired", fix: "renew it (PARLEY_TLS_CERTIFICATE)")
        }
        return "\(certificate) and \(key) match; the certificate expires in \(days) days"
    }

    /// Connects within the timeout, or throws the problem `failure` makes of the broker's refusal.
    private func connect(
        _ configuration: MQTTConfiguration, failure: (_ refusal: String) -> Problem
    ) async throws {
        let client = try MQTTClient(configuration: configuration, logger: Runtime.logger("mqtt"))
        try client.start()
        do {
            try await client.waitUntilConnected(timeout: timeout)
        } catch {
            let refusal = client.refusal.map { " (the broker said: \($0))" } ?? " within \(timeout)"
            await client.shutdown()
            throw failure(refusal)
        }
        await client.shutdown()
    }
}
