import Foundation
import Hummingbird
import NIOCore
import NIOSSL
import ParleyKit
import ParleyRuntime
import ParleyTestSupport
import Testing

/// ``MQTTConnection`` against the test services' mosquitto, in both versions.
struct MQTTConnectionTests {
    /// How a test reaches the broker: plain TCP, TLS, or WebSocket under TLS (`wss://…/mqtt`,
    /// as the login tells clients).
    enum Way: CaseIterable { case tcp, tls, webSocket }

    private func connect(
        _ version: MQTTVersion, clientID: String = "kit-\(UUID().uuidString.prefix(8))", cleanStart: Bool = true,
        keepAlive: UInt16 = 30, password: String? = nil, properties: MQTTProperties = [], way: Way = .tcp
    ) async throws -> MQTTConnection {
        let services = try await TestServices.shared()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(services.certificatePath)
        var endpoint: MQTTEndpoint
        switch way {
        case .tcp: endpoint = MQTTEndpoint(host: "127.0.0.1", port: services.port("MQTT"))
        case .tls: endpoint = MQTTEndpoint(host: "127.0.0.1", port: services.port("MQTT_TLS"), tls: tls)
        case .webSocket: endpoint = try MQTTEndpoint(url: "wss://127.0.0.1:\(services.port("MQTT_WS"))/mqtt", tls: tls)
        }
        endpoint.serverHostname = "localhost"
        return try await MQTTConnection.connect(
            to: endpoint,
            as: .init(
                version: version, clientID: clientID, cleanStart: cleanStart, keepAlive: keepAlive,
                username: "parley-server", password: ByteBuffer(string: password ?? services.secret("MQTT")),
                properties: properties))
    }

    private func next(_ deliveries: AsyncStream<MQTTPacket.Publish>) async throws -> MQTTPacket.Publish? {
        try await withTimeout(.seconds(5)) {
            var iterator = deliveries.makeAsyncIterator()
            return await iterator.next()
        }
    }

    @Test(arguments: MQTTVersion.allCases, Way.allCases)
    func aPublicationReachesASubscriberAtEachQoS(version: MQTTVersion, way: Way) async throws {
        let topic = "parley-kit/\(UUID().uuidString)"
        let subscriber = try await connect(version, way: way)
        let publisher = try await connect(version)
        #expect(try await subscriber.subscribe([.init(topicFilter: topic, qos: .exactlyOnce)]) == [2])
        #expect(
            try await publisher.publish(.init(topic: topic, payload: ByteBuffer(string: "one"), qos: .atLeastOnce)) == 0
        )
        try await publisher.publish(.init(topic: topic, payload: ByteBuffer(string: "two")))
        #expect(
            try await publisher.publish(.init(topic: topic, payload: ByteBuffer(string: "three"), qos: .exactlyOnce))
                == 0)
        for (payload, qos) in [("one", MQTTQoS.atLeastOnce), ("two", .atMostOnce), ("three", .exactlyOnce)] {
            let delivered = try await next(subscriber.deliveries)
            #expect(delivered?.payload == ByteBuffer(string: payload))
            #expect(delivered?.qos == qos)
        }
        #expect(try await subscriber.unsubscribe([topic]) == (version == .v5 ? [0] : []))
        await publisher.disconnect()
        await subscriber.disconnect()
    }

    /// A session kept by the broker (3.1.1's clean session off, 5's expiry) gets what was
    /// published at QoS 1 while it was away.
    @Test(arguments: MQTTVersion.allCases)
    func aResumedSessionGetsWhatCameWhileAway(version: MQTTVersion) async throws {
        let topic = "parley-kit/\(UUID().uuidString)"
        let clientID = "kit-resume-\(UUID().uuidString.prefix(8))"
        let expiry: MQTTProperties = version == .v5 ? [.sessionExpiryInterval(60)] : []
        let away = try await connect(version, clientID: clientID, cleanStart: false, properties: expiry)
        _ = try await away.subscribe([.init(topicFilter: topic, qos: .atLeastOnce)])
        await away.disconnect()
        let publisher = try await connect(version)
        try await publisher.publish(.init(topic: topic, payload: ByteBuffer(string: "while away"), qos: .atLeastOnce))
        await publisher.disconnect()

        let back = try await connect(version, clientID: clientID, cleanStart: false, properties: expiry)
        #expect(back.connack.sessionPresent)
        #expect(try await next(back.deliveries)?.payload == ByteBuffer(string: "while away"))
        await back.disconnect()
        // Cleaned up: a clean start ends the kept session.
        await (try await connect(version, clientID: clientID)).disconnect()
    }

    @Test(arguments: [(MQTTVersion.v3_1_1, UInt8(5)), (.v5, 0x87)])
    func aWrongPasswordIsRefusedWithTheBrokersCode(version: MQTTVersion, code: UInt8) async throws {
        await #expect(throws: MQTTConnectionError.refused(code)) {
            _ = try await connect(version, password: "not the password")
        }
    }

    /// mosquitto closes a client silent for one and a half keep-alives: pings keep it open.
    @Test func pingsKeepAnIdleConnectionOpen() async throws {
        let topic = "parley-kit/\(UUID().uuidString)"
        let idle = try await connect(.v3_1_1, keepAlive: 1)
        try await Task.sleep(for: .milliseconds(3500))
        #expect(try await idle.subscribe([.init(topicFilter: topic, qos: .atMostOnce)]) == [0])
        await idle.disconnect()
        await idle.closed()
    }

    @Test func aURLNamesTheTransportTheTLSAndTheSchemesPort() throws {
        let wss = try MQTTEndpoint(url: "wss://chat.example.com/mqtt")
        #expect(wss.port == 443)
        #expect(wss.transport == .webSocket(path: "/mqtt"))
        #expect(wss.tls != nil)
        let plain = try MQTTEndpoint(url: "mqtt://127.0.0.1")
        #expect(plain.port == 1883)
        #expect(plain.transport == .tcp)
        #expect(plain.tls == nil)
        #expect(try MQTTEndpoint(url: "mqtts://h:9").port == 9)
        #expect(throws: MQTTEndpointError.unsupportedURL("https://h/")) { try MQTTEndpoint(url: "https://h/") }
    }

    /// An HTTP server that does not upgrade (no broker there): the connection fails with its status.
    @Test func aWebSocketUpgradeRefusedSaysItsStatus() async throws {
        let router = Router()
        router.get("/elsewhere") { _, _ in "not here" }
        let server = try await LoopbackHTTPServer.start(router)
        defer { Task { await server.stop() } }
        let endpoint = MQTTEndpoint(host: "127.0.0.1", port: server.port, transport: .webSocket(path: "/mqtt"))
        await #expect(throws: MQTTEndpointError.webSocketRefused(404)) {
            _ = try await MQTTConnection.connect(to: endpoint, as: .init(version: .v5, clientID: "c"))
        }
    }
}
