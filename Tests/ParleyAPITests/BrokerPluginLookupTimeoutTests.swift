import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

/// The plugin fails closed: a lookup Parley does not answer within the plugin's timeout is
/// a denial — not an allowance, and not a broker waiting on it.
struct BrokerPluginLookupTimeoutTests {
    @Test func aSubscriptionParleyDoesNotAnswerForIsDeniedWhenTheLookupTimesOut() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let broker = try await PluginBroker(
            tokenKeyBase64: BrokerPluginTests.keyBase64, serverUsername: BrokerPluginTests.server.username,
            serverPassword: BrokerPluginTests.server.password,
            aclURL: "http://127.0.0.1:\(silent.port)/internal/broker/acl", lookupTimeout: .milliseconds(300))
        let key = try MQTTTokenKey(bytes: Array(repeating: 42, count: 32))
        let token = MQTTToken(
            userID: 7, clientID: "silent-acl", sessionID: 1, expiresAt: Int64(Date().timeIntervalSince1970) + 600)
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: "7", password: token.signed(with: key), clientID: "silent-acl",
                keepAlive: .seconds(5), acknowledgementTimeout: .seconds(10)),
            logger: .quiet)
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        // Refused by the broker (a SUBACK failure code) once the lookup times out, not a wait
        // for the acknowledgement (10 s) that never comes.
        let asked = ContinuousClock.now
        await #expect(throws: MQTTError.self) {
            do {
                try await client.subscribe(Topic.room("AAAAAAAAAAAAAAAAAAAAAA"))
            } catch let error as MQTTError {
                #expect(error.code == -102, "\(error)")
                throw error
            }
        }
        #expect(ContinuousClock.now - asked < .seconds(5), "refused after \(ContinuousClock.now - asked)")
        await client.shutdown()
        await broker.stop()
    }
}
