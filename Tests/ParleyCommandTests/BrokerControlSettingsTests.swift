import Foundation
import Testing

@testable import parley

/// `PARLEY_BROKER_CONTROL`: the plugin's `$CONTROL` by default, EMQX's API when asked, with
/// everything it needs.
struct BrokerControlSettingsTests {
    @Test func thePluginByDefaultAndEMQXOnlyWithItsAddressAndKey() throws {
        #expect(try Settings(environment: [:]).emqxAPI() == nil)
        let emqx = [
            "PARLEY_BROKER_CONTROL": "emqx", "PARLEY_EMQX_API_URL": "http://emqx:18083/", "PARLEY_EMQX_API_KEY": "k",
            "PARLEY_EMQX_API_SECRET": "s",
        ]
        let api = try #require(try Settings(environment: emqx).emqxAPI())
        #expect(api.baseURL == "http://emqx:18083" && api.key == "k" && api.secret == "s")
        for missing in ["PARLEY_EMQX_API_URL", "PARLEY_EMQX_API_KEY", "PARLEY_EMQX_API_SECRET"] {
            #expect(throws: SettingsError.self, "\(missing)") {
                try Settings(environment: emqx.filter { $0.key != missing }).emqxAPI()
            }
        }
        #expect(throws: SettingsError.self) {
            try Settings(environment: emqx.merging(["PARLEY_EMQX_API_URL": "emqx:18083"]) { $1 }).emqxAPI()
        }
        #expect(throws: SettingsError.self) { try Settings(environment: ["PARLEY_BROKER_CONTROL": "hivemq"]).emqxAPI() }
    }

    @Test func onEMQXTheSenderMustBeTheTopicsAsEMQXStampsNone() throws {
        #expect(try Settings(environment: [:]).ingestSender() == .plugin)
        #expect(throws: SettingsError.self) {
            try Settings(environment: ["PARLEY_BROKER_CONTROL": "emqx"]).ingestSender()
        }
        let topic = ["PARLEY_BROKER_CONTROL": "emqx", "PARLEY_INGEST_SENDER": "topic"]
        #expect(try Settings(environment: topic).ingestSender() == .topic)
    }
}
