import Foundation
import HummingbirdTesting
import Logging
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyAPI
@testable import parley

#if canImport(Glibc)
    import Glibc
#endif

/// Real MQTT clients against mosquitto with Parley's plugin, whose ACL questions go to a
/// real internal listener over HTTP.
struct BrokerPluginTests {
    static let server = BrokerAuthority.ServerIdentity(username: "parley-server", password: "plugin-test-secret")
    static let keyBase64 = Data(repeating: 42, count: 32).base64EncodedString()

    /// Runs `body` with the public API in memory, the internal listener live, and the broker.
    func withBroker(
        valgrind: Bool = false, relay: Bool = false, ingest: Bool = false,
        _ body: @escaping @Sendable (any TestClientProtocol, PluginBroker) async throws -> Void
    ) async throws -> PluginBroker {
        try await withBroker(valgrind: valgrind, relay: relay, ingest: ingest) { client, broker, _ in
            try await body(client, broker)
        }
    }

    /// As above, with the harness (its database) for the body too.
    func withBroker(
        valgrind: Bool = false, relay: Bool = false, ingest: Bool = false, brokerOptions: String = "",
        senders: ChatInSender = .plugin, receiptsMaxMembers: Int = MessageReceipts.defaultMaxMembers,
        _ body: @escaping @Sendable (any TestClientProtocol, PluginBroker, APIHarness) async throws -> Void
    ) async throws -> PluginBroker {
        var made = try await APIHarness.make()
        made.receiptsMaxMembers = receiptsMaxMembers
        let harness = made
        let authority = BrokerAuthority(
            key: APIHarness.mqttKey, server: Self.server,
            sessions: PostgresSessionRepository(database: harness.database, logger: .quiet),
            rooms: PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing),
            privacy: PostgresPrivacyRepository(database: harness.database, logger: .quiet),
            senders: senders)
        let internalServer = APIServer(
            configuration: HTTPConfiguration(port: nil, tlsPort: nil, internalPort: 0), logger: .quiet)
        let ports = PortBook()
        let routes = ParleyRoutes.forTesting(broker: BrokerAuthController(authority: authority))
        let listeners = try internalServer.services(
            publicRouter: routes.publicRouter(), internalRouter: routes.internalRouter()
        ) { listener, port in ports.set(listener, port) }
        let group = ServiceGroup(configuration: .init(services: listeners.map { .init(service: $0) }, logger: .quiet))
        let brokerBox = Handed<PluginBroker?>(nil)
        // The server's own connection to the plugin broker: ends sessions, relays events.
        let serverLink = ServerLink()
        try await harness.run(broker: serverLink) { client in
            let running = Task { try await group.run() }
            for _ in 0..<200 where ports.port(.internal) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let broker = try await PluginBroker(
                tokenKeyBase64: Self.keyBase64, serverUsername: Self.server.username,
                serverPassword: Self.server.password,
                aclURL: "http://127.0.0.1:\(ports.port(.internal))/internal/broker/acl", valgrind: valgrind,
                extraOptions: brokerOptions)
            brokerBox.set(broker)
            let server = try await connected(try serverClient(broker))
            serverLink.set(MQTTBrokerSessionControl(client: server, logger: .quiet))
            let ingestClient = try await connected(try serverClient(broker))
            var parts = harness.workerParts()
            if relay {
                // No fan-out role: these tests watch room topics only.
                parts.outbox = WorkerGraph.Outbox(publisher: server, fanoutJobs: NoQueue(), stallLimit: .seconds(60))
            }
            if ingest {
                parts.ingest = WorkerGraph.Ingest(
                    input: ingestClient, publisher: server, lanes: 16, batchLimit: 256,
                    commitInterval: .milliseconds(4), keepsSubscription: false, senders: senders,
                    senderStampKey: senders == .plugin ? PluginBroker.stampKey : nil,
                    progressEvery: .milliseconds(100), payloadLimit: 64 * 1024, abuseLimits: harness.abuseLimits,
                    rateLimitNamespace: harness.namespace)
            }
            let relayGroup = WorkerGraph(parts).serviceGroup()
            let relaying = Task { try await relayGroup.run() }
            do {
                try await body(client, broker, harness)
            } catch {
                await broker.stop()
                throw error
            }
            await relayGroup.triggerGracefulShutdown()
            try await relaying.value
            await server.shutdown()
            await ingestClient.shutdown()
            await group.triggerGracefulShutdown()
            try await running.value
        }
        return try #require(brokerBox.value)
    }

    /// A client with the credentials of `login`'s answer; `password` or `clientID` stand in for
    /// its own when given. `patience`: how long it waits for an acknowledgement (longer for a
    /// broker under valgrind beside the whole suite).
    func mqtt(
        _ broker: PluginBroker, login: LoginResponse, password: String? = nil, clientID: String? = nil,
        patience: Duration = .seconds(3)
    ) throws -> MQTTClient {
        try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: login.mqtt.username, password: password ?? login.mqtt.password,
                clientID: clientID ?? login.mqtt.clientId, keepAlive: .seconds(5),
                acknowledgementTimeout: patience), logger: .quiet)
    }

    func serverClient(_ broker: PluginBroker) throws -> MQTTClient {
        try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: Self.server.username, password: Self.server.password,
                clientID: "parley-test-\(UUID().uuidString.prefix(8))", acknowledgementTimeout: .seconds(3)),
            logger: .quiet)
    }

    func connected(_ client: MQTTClient) async throws -> MQTTClient {
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        return client
    }

    func next(_ client: MQTTClient, within limit: Duration) async -> MQTTMessage? {
        await MessageInbox.of(client).next(within: limit)
    }

    /// The next event of `type` whose data `wanted` accepts (20 messages at most, each within
    /// `limit`); nil when none came.
    func envelope<Payload: Decodable>(
        _ client: MQTTClient, _ type: String, of payload: Payload.Type, within limit: Duration = .seconds(3),
        where wanted: (Payload) -> Bool = { _ in true }
    ) async -> Envelope<Payload>? {
        for _ in 0..<20 {
            guard let message = await next(client, within: limit) else { return nil }
            if let envelope = try? JSONCoding.decoder.decode(Envelope<Payload>.self, from: Data(message.payload)),
                envelope.type == type, wanted(envelope.data)
            {
                return envelope
            }
        }
        return nil
    }

    /// The next `message-rejected` on a client's own notification topic.
    func rejection(_ client: MQTTClient) async -> RoomEvent.Rejection? {
        await envelope(client, "message-rejected", of: RoomEvent.Rejection.self)?.data
    }

    @Test func connectSubscribeAndRevocationThroughThePlugin() async throws {
        let broker = try await withBroker { api, broker in
            let users = try await api.signUp(count: 3)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let uid = try #require(room.json["uid"] as? String)

            // CONNECT: a good token, a tampered one, a foreign client id.
            let member = try await connected(try mqtt(broker, login: users[1]))
            let refused = try mqtt(broker, login: users[2], password: users[2].mqtt.password + "x")
            try refused.start()
            await #expect(throws: MQTTError.timeout) { try await refused.waitUntilConnected(timeout: .seconds(1)) }
            await refused.shutdown()
            let hijack = try mqtt(broker, login: users[2], clientID: "someone-elses-id")
            try hijack.start()
            await #expect(throws: MQTTError.timeout) { try await hijack.waitUntilConnected(timeout: .seconds(1)) }
            await hijack.shutdown()

            // SUBSCRIBE: the member's room and own notices; nothing else.
            try await member.subscribe(Topic.room(uid))
            try await member.subscribe(Topic.notifications(userID(users[1])))
            await #expect(throws: MQTTError.self) { try await member.subscribe("#") }
            await #expect(throws: MQTTError.self) { try await member.subscribe("chat-in/\(uid)") }
            await #expect(throws: MQTTError.self) { try await member.subscribe(Topic.notifications(userID(users[0]))) }
            let outsider = try await connected(try mqtt(broker, login: users[2]))
            await #expect(throws: MQTTError.self) { try await outsider.subscribe(Topic.room(uid)) }
            await #expect(throws: MQTTError.self) {
                try await outsider.publish(topic: Topic.room(uid), string: "spoof")
            }
            // A batch fails with its refusals, and the client goes on publishing (below).
            let refusal = await #expect(throws: MQTTError.self) {
                try await member.publish(
                    batch: (1...2).map { (topic: Topic.room(uid), payload: Array("spoof \($0)".utf8)) })
            }
            #expect(refusal?.isUnavailability == false, "a refusal, not a timeout: \(String(describing: refusal))")

            // Presence: one publish per 10 s and client.
            let presenceTopic = "user/\(userID(users[1]))/online"
            let online =
                #"{"type":"online-user-message","data":{"lastActivity":"2026-11-22T00:00:00.000Z","online":true},"hash":"p1"}"#
            try await member.publish(topic: presenceTopic, string: online)
            await #expect(throws: MQTTError.self) { try await member.publish(topic: presenceTopic, string: online) }
            await #expect(throws: MQTTError.self) {
                try await member.publish(topic: "user/\(userID(users[0]))/online", string: online)
            }

            // Deliveries follow the subscription. An invalidated answer is asked for again at
            // the next delivery: still a member, so it still arrives (a removed member's stops:
            // aRemovedMemberStopsReceivingAndALoggedOutClientIsDisconnected).
            let server = try await connected(try serverClient(broker))
            try await server.subscribe("user/+/online")
            try await server.publish(topic: Topic.room(uid), string: "first")
            #expect(await next(member, within: .seconds(3))?.payload == Array("first".utf8))
            let command = #"{"invalidate":["\#(userID(users[1])) \#(Topic.room(uid))"]}"#
            try await server.publish(topic: "$CONTROL/parley-auth/v1", string: command)
            try await Task.sleep(for: .milliseconds(200))
            try await server.publish(topic: Topic.room(uid), string: "asked again")
            #expect(await next(member, within: .seconds(3))?.payload == Array("asked again".utf8))

            // A kicked client is gone, and its presence says offline (retained).
            let kick = #"{"kickClients":["\#(users[1].mqtt.clientId)"]}"#
            try await server.publish(topic: "$CONTROL/parley-auth/v1", string: kick)
            var presence: MQTTMessage?
            for _ in 0..<10 where presence == nil {
                if let message = await next(server, within: .seconds(1)),
                    message.topic == "user/\(userID(users[1]))/online"
                {
                    presence = message
                }
            }
            let envelope = try JSONCoding.decoder.decode(
                Envelope<Presence>.self, from: Data(try #require(presence).payload))
            #expect(envelope.type == "online-user-message")
            #expect(!envelope.data.online)
            #expect(envelope.data.lastActivity.hasSuffix("Z"))
            for client in [member, outsider, server] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// With `PARLEY_INGEST_SESSION` the broker keeps the ingest's session: chat-in published
    /// while the worker is down waits for it instead of being dropped with no one to take it.
    @Test func aKeptIngestSessionGetsWhatWasSentWhileItWasDown() async throws {
        let broker = try await withBroker { api, broker, harness in
            let users = try await api.signUp(count: 2)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let (roomID, uid) = (try #require(room.json["id"] as? Int), try #require(room.json["uid"] as? String))
            let sessionID = "parley-ingest-test-\(UUID().uuidString.prefix(8))"
            // What the handler publishes goes through a client of its own: the ingest's waits.
            let publisher = try await connected(try serverClient(broker))
            func startIngest() async throws -> (MQTTClient, ServiceGroup, Task<Void, any Error>) {
                try await startKeptIngest(broker, harness, session: sessionID, publisher: publisher)
            }
            func send(_ id: String) async throws {
                try await writer.publish(
                    topic: "chat-in/\(uid)",
                    string:
                        #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"c","uid":"\#(id)"},"hash":"\#(id)"}"#
                )
            }
            func stored() async throws -> [String] {
                try await api.history(roomID, "limit=50", as: users[1]).messages.map(\.uid)
            }
            let writer = try await connected(try mqtt(broker, login: users[0]))
            var (client, group, running) = try await startIngest()
            // The consumer subscribes as it starts.
            try await Task.sleep(for: .milliseconds(500))
            try await send("before")
            for _ in 0..<100 where try await stored() != ["before"] { try await Task.sleep(for: .milliseconds(50)) }
            let first = try await stored()
            #expect(first == ["before"], "\(first)")

            await group.triggerGracefulShutdown()
            try await running.value
            await client.shutdown()
            for index in 0..<5 { try await send("while-down-\(index)") }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await stored() == ["before"], "no ingest is running")

            (client, group, running) = try await startIngest()
            let expected = ["before"] + (0..<5).map { "while-down-\($0)" }
            for _ in 0..<100 where try await stored().sorted() != expected.sorted() {
                try await Task.sleep(for: .milliseconds(50))
            }
            let all = try await stored()
            #expect(all.sorted() == expected.sorted(), "\(all)")
            await group.triggerGracefulShutdown()
            try await running.value
            await client.shutdown()
            for client in [writer, publisher] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// A client that takes its session over (reconnecting before the broker noticed the old
    /// connection end) may publish at once: the old connection's end, reported after the new
    /// login, must not mark the new one gone (the chaos run's broker restart found that).
    @Test func aClientThatTakesItsSessionOverMayPublish() async throws {
        let broker = try await withBroker(ingest: true) { api, broker, _ in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "Over")
            let first = try await connected(try mqtt(broker, login: users[0]))
            let second = try await connected(try mqtt(broker, login: users[0]))
            for _ in 0..<100 where first.isConnected { try await Task.sleep(for: .milliseconds(20)) }
            await first.shutdown()
            try await second.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"again","uid":"over-1"},"hash":"o1"}"#
            )
            var stored: [String] = []
            for _ in 0..<100 where !stored.contains("over-1") {
                try await Task.sleep(for: .milliseconds(50))
                stored = try await api.history(roomID, as: users[1]).messages.map(\.uid)
            }
            #expect(stored.contains("over-1"))
            await second.shutdown()
        }
        #expect(await broker.stop() == 0)
    }

    @Test func aRemovedMemberStopsReceivingAndALoggedOutClientIsDisconnected() async throws {
        let broker = try await withBroker(relay: true) { api, broker in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "reader"), (users[2], "reader")])
            let staying = try await connected(try mqtt(broker, login: users[1]))
            let leaving = try await connected(try mqtt(broker, login: users[2]))
            for client in [staying, leaving] { try await client.subscribe(Topic.room(uid)) }

            #expect(
                try await api.json(.delete, "/v1/rooms/\(roomID)/members/\(userID(users[2]))", token: token(users[0]))
                    .status
                    == .noContent)
            try await Task.sleep(for: .seconds(1))
            let sent = try await api.send("secret", uid: "s", to: roomID, as: users[0])
            func receivedMessage(_ client: MQTTClient) async -> Bool {
                await envelope(client, "new-message-notification", of: Message.self, within: .seconds(2)) {
                    $0.id == sent.id
                } != nil
            }
            #expect(await receivedMessage(staying))
            #expect(!(await receivedMessage(leaving)))

            // Logout: the client is disconnected and its token refused.
            #expect(try await api.json(.post, "/v1/auth/logout", token: token(users[1])).status == .noContent)
            var disconnected = false
            for _ in 0..<50 where !disconnected {
                try await Task.sleep(for: .milliseconds(20))
                disconnected = !staying.isConnected
            }
            #expect(disconnected)
            try await Task.sleep(for: .seconds(2))
            #expect(!staying.isConnected)
            for client in [staying, leaving] { await client.shutdown() }
        }
        await broker.stop()
    }
}

/// Ends sessions through the plugin once the test's server connection exists.
final class ServerLink: BrokerSessionControl {
    private let control = Mutex<MQTTBrokerSessionControl?>(nil)
    func set(_ control: MQTTBrokerSessionControl) { self.control.withLock { $0 = control } }
    func end(sessions: [Int64], clientIDs: [String]) async {
        await control.withLock { $0 }?.end(sessions: sessions, clientIDs: clientIDs)
    }
}

/// Fan-out jobs are not needed where only room topics are watched.
struct NoQueue: JobQueue {
    func enqueue(_ job: String) async throws {}
}

/// A value a broker test's body hands to the test around it.
final class Handed<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    func set(_ value: Value) { state.withLock { $0 = value } }
    var value: Value { state.withLock { $0 } }
}
