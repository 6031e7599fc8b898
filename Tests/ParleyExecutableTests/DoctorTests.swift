import Foundation
import ParleyTestSupport
import Testing

/// `parley doctor`: a good configuration passes every check; each wrong one fails its own
/// check, with the setting to fix, and the exit status says so.
struct DoctorTests {
    static let tokenKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

    /// The findings by check name, and the exit status.
    func doctor(_ parley: ParleyCommand) async throws -> (status: Int32, findings: [String: String]) {
        let result = try await parley.run("doctor")
        var findings: [String: String] = [:]
        for line in result.standardOutput.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let head = line[..<colon]
            let name = head.dropFirst(4).trimmingCharacters(in: .whitespaces)
            findings[name] = String(line)
        }
        return (result.status, findings)
    }

    func pluginBroker(_ services: TestServices) async throws -> PluginBroker {
        try await PluginBroker(
            tokenKeyBase64: Self.tokenKey, serverUsername: "parley-server", serverPassword: services.secret("MQTT"),
            aclURL: "http://127.0.0.1:9/internal/broker/acl")
    }

    @Test func aGoodConfigurationPassesEveryCheck() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let broker = try await pluginBroker(services)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_MQTT_PORT": String(broker.port)
            ]) { $1 })
        let (status, findings) = try await doctor(parley)
        #expect(status == 0, "\(findings)")
        for check in ["settings", "postgres", "redis", "broker", "broker plugin", "chat-in sender", "tls"] {
            #expect(findings[check]?.hasPrefix("ok ") == true, "\(check): \(findings)")
        }
        #expect(await broker.stop() == 0)
    }

    @Test func eachWrongSettingFailsItsCheckAndNamesTheFix() async throws {
        let services = try TestServices.shared()
        // Not migrated: the schema is behind.
        let database = try await services.makeDatabase(migrated: false)
        let broker = try await pluginBroker(services)
        let otherKey = TestScratch.path("other", suffix: ".key")
        defer { try? FileManager.default.removeItem(atPath: otherKey) }
        let generated = try await Subprocess.run(
            "/usr/bin/openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKey])
        #expect(generated.status == 0, "\(generated.standardError)")
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_REDIS_PASSWORD": "not-the-password",
                "PARLEY_MQTT_TOKEN_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                "PARLEY_TLS_KEY": otherKey,
            ]) { $1 })
        let (status, findings) = try await doctor(parley)
        #expect(status == 1)
        #expect(findings["settings"]?.hasPrefix("ok ") == true, "\(findings)")
        #expect(findings["broker"]?.hasPrefix("ok ") == true, "\(findings)")
        let expected = [
            "postgres": "parley migrate up", "redis": "PARLEY_REDIS_PASSWORD", "broker plugin": "PARLEY_MQTT_TOKEN_KEY",
            "tls": "PARLEY_TLS_KEY",
        ]
        for (check, fix) in expected {
            let line = findings[check] ?? ""
            #expect(line.hasPrefix("FAIL") && line.contains(fix), "\(check): \(line)")
        }
        // The password given is never printed.
        #expect(!findings.values.contains { $0.contains("not-the-password") })
        #expect(await broker.stop() == 0)
    }

    @Test func anInvalidSettingIsNamed() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_FANOUT_CONSUMERS": "many"
            ]) { $1 })
        let (status, findings) = try await doctor(parley)
        #expect(status == 1)
        let line = findings["settings"] ?? ""
        #expect(line.hasPrefix("FAIL") && line.contains("PARLEY_FANOUT_CONSUMERS"), "\(findings)")
    }
}
