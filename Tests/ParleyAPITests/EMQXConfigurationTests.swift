import Foundation
import HTTPTypes
import Testing

@testable import ParleyAPI

/// The shipped EMQX configuration (`deploy/emqx/emqx.conf`) asks Parley's endpoints exactly
/// what they answer: its request templates, filled in as EMQX fills them, are sent to the
/// internal router and allowed.
struct EMQXConfigurationTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../deploy/emqx")

    /// The HTTP calls the configuration makes: each `url`'s path and its `body { key = "value" }`.
    static func calls(in configuration: String) throws -> [(path: String, body: [String: String])] {
        let url = try Regex(#"url = "http://[^/"]+(/[^"]*)""#)
        // A block's `}` is the first one not closing a `${placeholder}`.
        let body = try Regex(#"body \{((?:[^{}]|\$\{\w+\})*)\}"#)
        let field = try Regex(#"(\w+) = "([^"]*)""#)
        let paths = configuration.matches(of: url).map { String($0.output[1].substring ?? "") }
        let bodies = configuration.matches(of: body).map { match in
            Dictionary(
                uniqueKeysWithValues: String(match.output[1].substring ?? "").matches(of: field).map {
                    (String($0.output[1].substring ?? ""), String($0.output[2].substring ?? ""))
                })
        }
        return Array(zip(paths, bodies)).map { (path: $0.0, body: $0.1) }
    }

    @Test func itsAuthenticationAndAuthorizationRequestsAreAnsweredAllow() async throws {
        let configuration = try String(
            contentsOf: Self.directory.appendingPathComponent("emqx.conf"), encoding: .utf8)
        let calls = try Self.calls(in: configuration)
        #expect(calls.map(\.path) == ["/internal/broker/emqx/authn", "/internal/broker/emqx/authz"])
        // What the broker must hold for Parley's rules: deny what Parley did not allow, keep
        // presence retained, share chat-in among ingests.
        for setting in ["no_match = deny", "retain_available = true", "shared_subscription = true"] {
            #expect(configuration.contains(setting), "\(setting)")
        }
        let tests = BrokerAuthTests()
        try await tests.withRouters { api, broker in
            let login = try await api.signUp()
            let values = [
                "${clientid}": login.mqtt.clientId, "${username}": login.mqtt.username,
                "${password}": login.mqtt.password, "${topic}": "chat-in/AbCdEfGhIjKlMnOpQrStUv/\(login.mqtt.username)",
                "${action}": "subscribe",
            ]
            for call in calls {
                var body = call.body.mapValues { values[$0] ?? $0 }
                if call.path.hasSuffix("authz") { body["topic"] = "messenger-notifications/\(login.mqtt.username)" }
                let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
                let answer = try await tests.post(broker, call.path, json, as: BrokerAuthController.EMQXAnswer.self)
                #expect(answer.status == .ok, "\(call.path)")
                #expect(answer.reply?.result == "allow", "\(call.path) \(answer.text)")
            }
        }
    }

    @Test func parleysSettingsForItAreSettingsParleyHas() throws {
        let environment = try String(
            contentsOf: Self.directory.appendingPathComponent("parley.env"), encoding: .utf8)
        let readme = try String(
            contentsOf: Self.directory.appendingPathComponent("../../README.md"), encoding: .utf8)
        let names = environment.split(separator: "\n").compactMap { line -> String? in
            let text = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard text.hasPrefix("PARLEY_"), let equals = text.firstIndex(of: "=") else { return nil }
            return String(text[..<equals])
        }
        #expect(names.contains("PARLEY_INGEST_SENDER") && names.contains("PARLEY_BROKER_CONTROL"))
        for name in names { #expect(readme.contains("| `\(name)` |"), "\(name)") }
    }
}
