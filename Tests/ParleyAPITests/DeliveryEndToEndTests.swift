import Foundation
import HummingbirdTesting
import ParleyAPI
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import ServiceLifecycle
import Testing

/// A message sent over REST reaches the room topic and every member's notification topic
/// through the real broker: outbox relay → MQTT, fan-out job → Redis Streams → MQTT.
struct DeliveryEndToEndTests {
    @Test func aRESTSendArrivesOnTheRoomTopicAndEveryMembersNotificationTopic() async throws {
        let harness = try await AccountsHarness.make()
        let services = try TestServices.shared()
        let publisher = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        let subscriber = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        for client in [publisher, subscriber] {
            try client.start()
            try await client.waitUntilConnected(timeout: .seconds(5))
        }
        let queue = RedisJobQueue(
            name: "fanout-\(UUID().uuidString.prefix(8))", pool: harness.redis,
            configuration: .init(visibilityTimeout: .seconds(1), blockFor: .milliseconds(200)))
        let rooms = PostgresRoomRepository(database: harness.database, logger: .quiet)
        let fanout = FanoutHandler(readers: rooms, publisher: publisher, queue: queue, logger: .quiet)
        let workers = ServiceGroup(
            configuration: .init(
                services: [
                    .init(
                        service: OutboxRelay(
                            database: harness.database, publisher: publisher, fanout: queue, logger: .quiet)),
                    .init(service: JobConsumer(queue: queue, consumer: "e2e", logger: .quiet, handler: fanout.handle)),
                ], logger: .quiet))

        try await harness.run { client in
            let running = Task { try await workers.run() }
            var users: [[String: Any]] = []
            for _ in 0..<3 { users.append(try await client.signUp()) }
            let created = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body:
                    #"{"name":"E2E","members":[{"userId":\#(userID(users[1])),"role":"writer"},{"userId":\#(userID(users[2])),"role":"reader"}],"firstMessage":{"content":"hi","uid":"e2e-0"}}"#
            )
            let roomID = created.json["id"] as? Int ?? 0
            let uid = try #require(created.json["uid"] as? String)
            try await subscriber.subscribe(Topic.room(uid))
            for user in users { try await subscriber.subscribe(Topic.notifications(userID(user))) }

            let sent = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(users[1]),
                body: #"{"content":"over MQTT","uid":"e2e-1"}"#)
            let messageID = try #require(sent.json["id"] as? Int)

            var expected = Set([Topic.room(uid)] + users.map { Topic.notifications(userID($0)) })
            var events: [String: [String: Any]] = [:]
            let deadline = ContinuousClock.now + .seconds(10)
            while !expected.isEmpty && ContinuousClock.now < deadline {
                let next = try? await withTimeout(.seconds(10)) {
                    var iterator = subscriber.messages.makeAsyncIterator()
                    return await iterator.next()
                }
                guard let message = next ?? nil else { break }
                let envelope = (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any]
                let data = envelope?["data"] as? [String: Any]
                guard envelope?["type"] as? String == "new-message-notification", data?["id"] as? Int == messageID
                else { continue }
                expected.remove(message.topic)
                events[message.topic] = envelope
            }
            #expect(expected.isEmpty, "not delivered to \(expected)")
            let canonical = try #require(events[Topic.room(uid)])
            let data = try #require(canonical["data"] as? [String: Any])
            #expect(data["seq"] as? Int == 2)
            #expect(data["content"] as? String == "over MQTT")
            #expect(data["uid"] as? String == "e2e-1")
            #expect(data["chatRoomUid"] as? String == uid)
            #expect(data["sentById"] as? Int == Int(userID(users[1])))
            #expect((data["createdAt"] as? String)?.hasSuffix("Z") == true)
            #expect((canonical["hash"] as? String)?.isEmpty == false)
            // The same event, with the same hash, on every topic.
            #expect(Set(events.values.compactMap { $0["hash"] as? String }).count == 1)
            await workers.triggerGracefulShutdown()
            try await running.value
        }
        await publisher.shutdown()
        await subscriber.shutdown()
    }
}
