import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// What a broker restart keeps: sessions and their subscriptions (persistence), and with
/// `plugin_opt_grants_file` the plugin's answers to those subscriptions.
extension BrokerPluginTests {
    /// A persistent broker's store, writable by the broker's user (mosquitto, when the tests
    /// run as root); removed by `body`'s caller.
    func brokerStore() throws -> String {
        let store = TestScratch.path("broker-store", suffix: "/")
        try FileManager.default.createDirectory(
            atPath: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        return store
    }

    /// `login`'s client on a session the broker keeps for ten minutes.
    func kept(_ broker: PluginBroker, _ login: LoginResponse) throws -> MQTTClient {
        try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: login.mqtt.username, password: login.mqtt.password,
                clientID: login.mqtt.clientId, acknowledgementTimeout: .seconds(3), sessionExpiry: .seconds(600)),
            logger: .quiet)
    }

    /// The room topic of a direct room of two new users, the first of them.
    func directRoomTopic(_ api: any TestClientProtocol) async throws -> (topic: String, member: LoginResponse) {
        let (a, b) = (try await api.signUp(), try await api.signUp())
        let room = try await api.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a))
        return (Topic.room(room.json["uid"] as? String ?? ""), a)
    }

    /// Subscribes `member`'s kept session to `topic`, restarts the broker, and expects what the
    /// server publishes there to reach the restored session before it subscribes again.
    func expectDeliveredAcrossARestart(
        _ broker: PluginBroker, topic: String, member: LoginResponse,
        restart: (PluginBroker) async throws -> PluginBroker
    ) async throws {
        let before = try await connected(try kept(broker, member))
        try await before.subscribe(topic)
        await before.shutdown()

        let restarted = try await restart(broker)
        let server = try await connected(try serverClient(restarted))
        try await server.publish(topic: topic, string: "while away")
        let after = try await connected(try kept(restarted, member))
        let first = await next(after, within: .seconds(3))
        #expect(first.map { String(decoding: $0.payload, as: UTF8.self) } == "while away")
        try await server.publish(topic: topic, string: "back")
        let second = await next(after, within: .seconds(3))
        #expect(second.map { String(decoding: $0.payload, as: UTF8.self) } == "back")
        for client in [server, after] { await client.shutdown() }
        #expect(await restarted.stop() == 0)
    }

    /// A broker restart restores sessions and their subscriptions, but not the plugin's
    /// answers to them: a room event published before the client subscribes again still
    /// reaches its kept session (the chaos run lost such events after a restart).
    @Test func aRestoredSessionReceivesBeforeItSubscribesAgain() async throws {
        let store = try brokerStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        _ = try await withBroker(brokerOptions: "persistence true\npersistence_location \(store)") { api, broker, _ in
            let (topic, member) = try await directRoomTopic(api)
            try await expectDeliveredAcrossARestart(broker, topic: topic, member: member) { try await $0.restarted() }
        }
    }

    /// With `plugin_opt_grants_file` a graceful restart keeps the answers: the restored
    /// session's deliveries ask Parley nothing, so a Parley that does not answer in time (here:
    /// never) drops none of them. Read once: the file is gone after the start.
    @Test func aGracefulRestartKeepsTheSubscriptionsAnswers() async throws {
        let store = try brokerStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let silent = try SilentListener()
        defer { silent.close() }
        let grants = "\(store)grants"
        let options = "persistence true\npersistence_location \(store)\nplugin_opt_grants_file \(grants)"
        _ = try await withBroker(brokerOptions: options) { api, broker, _ in
            let (topic, member) = try await directRoomTopic(api)
            try await expectDeliveredAcrossARestart(broker, topic: topic, member: member) { broker in
                let restarted = try await broker.restarted(
                    aclURL: "http://127.0.0.1:\(silent.port)/internal/broker/acl", lookupTimeout: .milliseconds(300))
                #expect(!FileManager.default.fileExists(atPath: grants), "the answers were left for a later start")
                return restarted
            }
        }
    }
}
