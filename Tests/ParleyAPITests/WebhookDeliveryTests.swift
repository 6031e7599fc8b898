import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyOutbound
import ParleyRedis
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAPI
@testable import parley

/// Event webhooks with real receivers on loopback: signed as the README says, in order per
/// room, retried until a receiver comes back, never in the way of message delivery.
struct WebhookDeliveryTests {
    /// `GET /v1/admin/webhooks/{id}/deliveries`, as an administrator's tool reads it.
    struct Deliveries: Decodable {
        struct Delivery: Decodable {
            let id: String
            let type: String
            let status: String
            let attempts: [WebhookDelivery.Attempt]
        }

        let deliveries: [Delivery]
        let nextCursor: String?
    }

    static let loopback = OutboundRule(allowHTTP: true, allowed: [AddressRange("127.0.0.0/8")!])

    /// The API, an outbox relay and the webhooks role (retries after 0.2 s, at most 1 s
    /// apart); `setUp` runs before the workers start (a relay reads the subscriptions when it
    /// starts, then every two seconds), `body` beside them.
    func withWebhooks(
        setUp: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void,
        _ body: @escaping @Sendable (any TestClientProtocol, String, MQTTClient) async throws -> Void
    ) async throws {
        var harness = try await APIHarness.make()
        harness.outboundRule = Self.loopback
        let services = try TestServices.shared()
        let publisher = try await services.connectedMQTTClient()
        let subscriber = try await services.connectedMQTTClient()
        let configuration = RedisJobQueue.Configuration(visibilityTimeout: .seconds(5), blockFor: .milliseconds(200))
        let hooks = RedisJobQueue(
            name: "webhooks-\(UUID().uuidString.prefix(8))", pool: harness.redis, configuration: configuration)
        var parts = harness.workerParts()
        parts.outbox = WorkerGraph.Outbox(
            publisher: publisher,
            fanoutJobs: RedisJobQueue(
                name: "fanout-\(UUID().uuidString.prefix(8))", pool: harness.redis, configuration: configuration),
            stallLimit: .seconds(60), webhookJobs: hooks)
        var policy = WebhookRetryPolicy()
        policy.firstDelay = .milliseconds(200)
        policy.maximumDelay = .seconds(1)
        parts.webhooks = WorkerGraph.Webhooks(
            queue: hooks, transport: OutboundHTTPClient(rule: Self.loopback, resolver: SystemAddressResolver()),
            policy: policy)
        let workers = WorkerGraph(parts).serviceGroup()
        let ready = harness
        try await ready.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, ready)
            try await setUp(client, admin)
            let running = Task { try await workers.run() }
            do {
                try await body(client, admin, subscriber)
            } catch {
                await workers.triggerGracefulShutdown()
                _ = try? await running.value
                throw error
            }
            await workers.triggerGracefulShutdown()
            try await running.value
        }
        await publisher.shutdown()
        await subscriber.shutdown()
    }

    /// A webhook's deliveries once `done` holds of them (within 5 s): a delivery is marked
    /// succeeded just after its receiver answered.
    static func deliveries(
        _ client: any TestClientProtocol, admin: String, hook: Int, query: String,
        until done: (Deliveries) -> Bool
    ) async throws -> Deliveries {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let page = try await client.json(.get, "/v1/admin/webhooks/\(hook)/deliveries?\(query)", token: admin)
            let listed = try decode(Deliveries.self, from: page.text)
            if done(listed) || ContinuousClock.now > deadline { return listed }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func register(
        _ client: any TestClientProtocol, admin: String, url: String, events: [String]
    ) async throws -> (id: Int, secret: String) {
        let created = try await client.json(
            .post, "/v1/admin/webhooks", token: admin,
            body: #"{"url":"\#(url)","events":\#(try jsonText(events)),"description":"the app's backend"}"#)
        #expect(created.status == .created, "\(created.text)")
        return (try #require(created.json["id"] as? Int), try #require(created.json["secret"] as? String))
    }

    /// The README's recipe: HMAC-SHA256 of `id.timestamp.body`, keyed by the secret's bytes
    /// (base64 after `whsec_`), base64 after `v1,`.
    static func verifies(_ received: WebhookReceiver.Received, secret: String) -> Bool {
        guard let key = Data(base64Encoded: String(secret.dropFirst("whsec_".count))) else { return false }
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("\(received.id).\(received.timestamp).\(received.body)".utf8), using: SymmetricKey(data: key))
        return received.signature == "v1," + Data(mac).base64EncodedString()
    }

    static func contents(_ received: [WebhookReceiver.Received], room: Int) -> [String] {
        received.filter { $0.type == "message.created" && $0.data.chatRoomId == room }.compactMap(\.data.content)
    }

    @Test func signedEventsArriveInOrderPerRoomAndAreListed() async throws {
        let receiver = try await WebhookReceiver.start()
        let hook = Mutex<(id: Int, secret: String)?>(nil)
        try await withWebhooks { client, admin in
            let registered = try await Self.register(
                client, admin: admin, url: receiver.url, events: ["message.created", "member.added", "room.created"])
            hook.withLock { $0 = registered }
        } _: { client, admin, _ in
            let (hookID, secret) = try #require(hook.withLock { $0 })
            let users = try await client.signUp(count: 4)
            let roomA = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
            let roomB = try await client.multipartyRoom(
                by: users[1], members: [(users[0], "writer"), (users[2], "reader")])
            for index in 0..<8 {
                _ = try await client.send("a\(index)", uid: "a\(index)", to: roomA.id, as: users[index % 2])
                _ = try await client.send("b\(index)", uid: "b\(index)", to: roomB.id, as: users[1 - index % 2])
            }
            let added = try await client.json(
                .put, "/v1/rooms/\(roomA.id)/members/\(users[3].user.id)", token: token(users[0]),
                body: #"{"role":"reader"}"#)
            #expect(added.status == .ok, "\(added.text)")
            let got = await receiver.wait { received in
                Self.contents(received, room: roomA.id).count == 9 && Self.contents(received, room: roomB.id).count == 9
                    && received.contains { $0.type == "member.added" }
            }
            #expect(Self.contents(got, room: roomA.id) == ["hi"] + (0..<8).map { "a\($0)" })
            #expect(Self.contents(got, room: roomB.id) == ["hi"] + (0..<8).map { "b\($0)" })
            #expect(got.allSatisfy { Self.verifies($0, secret: secret) })
            #expect(Set(got.map(\.id)).count == got.count)
            #expect(got.filter { $0.type == "room.created" }.count == 2)
            let member = try #require(got.first { $0.type == "member.added" })
            #expect(member.data.userIds == [Int(users[3].user.id)] && member.data.chatRoomId == roomA.id)
            #expect(got.allSatisfy { $0.event?.timestamp.hasSuffix("Z") == true })
            // Listed newest first with each attempt, paged. The newest is the member added after
            // every send; rooms are delivered side by side, so it need not be the last to arrive.
            let listed = try await Self.deliveries(
                client, admin: admin, hook: hookID, query: "status=succeeded&limit=5"
            ) { $0.deliveries.first?.id == member.id }
            #expect(listed.deliveries.count == 5 && listed.nextCursor != nil)
            let attempts = try #require(listed.deliveries.first?.attempts)
            #expect(attempts.count == 1 && attempts.first?.statusCode == 200)
            #expect(listed.deliveries.first?.id == member.id)
            // A ping, and a retry of a delivered event under its own id.
            let ping = try await client.json(.post, "/v1/admin/webhooks/\(hookID)/ping", token: admin)
            #expect(ping.status == .accepted)
            let pingID = try #require(ping.json["deliveryId"] as? String)
            let retried = try #require(got.first { $0.type == "member.added" }?.id)
            // Marked succeeded (just after its answer) before it may be retried.
            _ = try await Self.deliveries(client, admin: admin, hook: hookID, query: "status=succeeded&limit=200") {
                $0.deliveries.contains { $0.id == retried }
            }
            let retry = try await client.json(
                .post, "/v1/admin/webhooks/\(hookID)/deliveries/\(retried)/retry", token: admin)
            #expect(retry.status == .accepted)
            let again = await receiver.wait { received in
                received.contains { $0.id == pingID } && received.filter { $0.id == retried }.count == 2
            }
            #expect(again.first { $0.id == pingID }?.type == "webhook.ping")
            #expect(again.filter { $0.id == retried }.count == 2)
        }
        await receiver.stop()
    }

    /// For a minute under load the receiver fails: 503 for the first half, then nothing
    /// listens at all. Every event then arrives, in order per room, none twice.
    @Test func aReceiverDownForAMinuteUnderLoadGetsEveryEventInOrder() async throws {
        let receiver = try await WebhookReceiver.start()
        receiver.status.withLock { $0 = 503 }
        let hook = Mutex<(id: Int, secret: String)?>(nil)
        try await withWebhooks { client, admin in
            let registered = try await Self.register(
                client, admin: admin, url: receiver.url, events: ["message.created"])
            hook.withLock { $0 = registered }
        } _: { client, admin, _ in
            let (hookID, _) = try #require(hook.withLock { $0 })
            let users = try await client.signUp(count: 3)
            var rooms: [Int] = []
            for index in 0..<3 {
                rooms.append(
                    try await client.multipartyRoom(
                        by: users[index],
                        members: [(users[(index + 1) % 3], "writer"), (users[(index + 2) % 3], "writer")]
                    ).id)
            }
            // 10 messages a second for a minute, the receiver down throughout.
            let started = ContinuousClock.now
            var sent = 0
            while ContinuousClock.now - started < .seconds(60) {
                if sent == 300 { await receiver.goDown() }
                _ = try await client.send("m\(sent)", uid: "m\(sent)", to: rooms[sent % 3], as: users[sent % 3])
                sent += 1
                try await Task.sleep(until: started + .milliseconds(100 * sent))
            }
            #expect(receiver.delivered.isEmpty && !receiver.received.isEmpty)
            receiver.status.withLock { $0 = 200 }
            try await receiver.comeBack()
            let perRoom = (sent + 2) / 3 + 1
            let got = await receiver.wait(within: .seconds(90)) { received in
                received.count >= 3 + sent
            }
            for (index, room) in rooms.enumerated() {
                #expect(
                    Self.contents(got, room: room) == ["hi"] + stride(from: index, to: sent, by: 3).map { "m\($0)" },
                    "room \(index)")
            }
            #expect(got.count == 3 + sent && perRoom > 100)
            #expect(Set(got.map(\.id)).count == got.count)
            _ = try await Self.deliveries(client, admin: admin, hook: hookID, query: "status=pending") {
                $0.deliveries.isEmpty
            }
            // Each room's first event held its lane: its attempts saw both kinds of failure.
            let deliveries = try await client.pages(
                Deliveries.self, "/v1/admin/webhooks/\(hookID)/deliveries?limit=200", token: admin
            ) { ($0.deliveries, $0.nextCursor) }.flatMap { $0 }
            #expect(deliveries.count == 3 + sent && deliveries.allSatisfy { $0.status == "succeeded" })
            let failures = deliveries.flatMap(\.attempts).filter { $0.statusCode != 200 }
            #expect(failures.contains { $0.statusCode == 503 }, "\(failures.prefix(3))")
            #expect(failures.contains { $0.error == "connection refused" }, "\(Set(failures.map(\.error)))")
        }
        await receiver.stop()
    }

    @Test func aSlowReceiverNeverDelaysMessageDelivery() async throws {
        let receiver = try await WebhookReceiver.start()
        receiver.delay.withLock { $0 = .seconds(4) }
        try await withWebhooks { client, admin in
            _ = try await Self.register(client, admin: admin, url: receiver.url, events: ["message.created"])
        } _: { client, _, subscriber in
            let users = try await client.signUp(count: 3)
            let room = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
            try await subscriber.subscribe(Topic.room(room.uid))
            let inbox = MessageInbox.of(subscriber)
            for index in 0..<5 {
                let sent = ContinuousClock.now
                _ = try await client.send("slow \(index)", uid: "s\(index)", to: room.id, as: users[0])
                var arrived = false
                while ContinuousClock.now - sent < .seconds(2), !arrived {
                    guard let message = await inbox.next(within: .milliseconds(500)) else { continue }
                    arrived = String(decoding: message.payload, as: UTF8.self).contains("slow \(index)")
                }
                #expect(arrived, "message \(index) waited for the webhook")
            }
        }
        await receiver.stop()
    }
}
