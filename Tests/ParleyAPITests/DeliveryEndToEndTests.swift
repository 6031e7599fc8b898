import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import ServiceLifecycle
import Testing

@testable import ParleyAPI

/// REST changes reach clients through the real broker: outbox relay → MQTT, fan-out job →
/// Redis Streams → MQTT.
struct DeliveryEndToEndTests {
    /// Runs `body` with the API, an outbox relay and a fan-out consumer, and an MQTT subscriber.
    func withPipeline(
        _ body: @escaping @Sendable (any TestClientProtocol, MQTTClient) async throws -> Void
    ) async throws {
        let harness = try await AccountsHarness.make()
        let services = try TestServices.shared()
        let publisher = try await services.connectedMQTTClient()
        let subscriber = try await services.connectedMQTTClient()
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
                            database: harness.database, publisher: publisher, fanout: queue,
                            fileLinks: AccountsHarness.fileLinks, logger: .quiet)),
                    .init(service: JobConsumer(queue: queue, consumer: "e2e", logger: .quiet, handler: fanout.handle)),
                ], logger: .quiet))
        try await harness.run { client in
            let running = Task { try await workers.run() }
            try await body(client, subscriber)
            await workers.triggerGracefulShutdown()
            try await running.value
        }
        await publisher.shutdown()
        await subscriber.shutdown()
    }

    /// Envelopes received per topic until `wanted` holds for every topic in `topics`.
    func receive(
        _ subscriber: MQTTClient, on topics: Set<String>, within limit: Duration = .seconds(10),
        where wanted: @escaping ([String: Any]) -> Bool
    ) async -> [String: [String: Any]] {
        var missing = topics
        var found: [String: [String: Any]] = [:]
        let deadline = ContinuousClock.now + limit
        while !missing.isEmpty && ContinuousClock.now < deadline {
            guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)),
                let envelope = (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any],
                wanted(envelope)
            else { continue }
            missing.remove(message.topic)
            found[message.topic] = envelope
        }
        return found
    }

    @Test func aRESTSendArrivesOnTheRoomTopicAndEveryMembersNotificationTopic() async throws {
        try await withPipeline { client, subscriber in
            let users = try await client.signUp(count: 3)
            let (roomID, uid) = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "E2E",
                firstMessage: ("hi", "e2e-0"))
            try await subscriber.subscribe(Topic.room(uid))
            for user in users { try await subscriber.subscribe(Topic.notifications(userID(user))) }

            let sent = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(users[1]),
                body: #"{"content":"over MQTT","uid":"e2e-1"}"#)
            let messageID = try #require(sent.json["id"] as? Int)
            let topics = Set([Topic.room(uid)] + users.map { Topic.notifications(userID($0)) })
            let events = await receive(subscriber, on: topics) { envelope in
                envelope["type"] as? String == "new-message-notification"
                    && (envelope["data"] as? [String: Any])?["id"] as? Int == messageID
            }
            #expect(Set(events.keys) == topics)
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
        }
    }

    @Test func aUserAddedOrRemovedIsToldOnTheirNotificationTopic() async throws {
        try await withPipeline { client, subscriber in
            let users = try await client.signUp(count: 4)
            let (roomID, uid) = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "writer")], name: "N",
                firstMessage: ("hi", "n-0"))
            let newcomer = Topic.notifications(userID(users[3]))
            try await subscriber.subscribe(newcomer)
            try await subscriber.subscribe(Topic.room(uid))

            func change(_ kind: String) -> ([String: Any]) -> Bool {
                { envelope in
                    let data = envelope["data"] as? [String: Any]
                    return envelope["type"] as? String == "chatroom-change-notification"
                        && data?["chatRoomId"] as? Int == roomID && data?["change"] as? String == kind
                }
            }
            _ = try await client.json(
                .put, "/v1/rooms/\(roomID)/members/\(userID(users[3]))", token: token(users[0]),
                body: #"{"role":"reader"}"#)
            let added = await receive(subscriber, on: [newcomer], where: change("added"))
            #expect((added[newcomer]?["data"] as? [String: Any])?["editById"] as? Int == Int(userID(users[0])))
            _ = try await client.json(
                .delete, "/v1/rooms/\(roomID)/members/\(userID(users[3]))", token: token(users[0]))
            #expect(await receive(subscriber, on: [newcomer], where: change("removed")).count == 1)
            _ = try await client.json(
                .patch, "/v1/rooms/\(roomID)", token: token(users[0]), body: #"{"name":"Renamed"}"#)
            #expect(await receive(subscriber, on: [Topic.room(uid)], where: change("renamed")).count == 1)
        }
    }

    /// A new message's event is encoded by the relay from the stored row: its file is the
    /// send's, with URLs signed by the deployment's key (those the API verifies).
    @Test func aMessageWithAFileArrivesWithTheFileTheSendAnswered() async throws {
        try await withPipeline { client, subscriber in
            let sender = try await client.signUp()
            let peers = [try await client.signUp(), try await client.signUp()]
            let (roomID, uid) = try await client.multipartyRoom(
                by: sender, members: [(peers[0], "writer"), (peers[1], "reader")], name: "F",
                firstMessage: ("hi", "f-0"))
            try await subscriber.subscribe(Topic.room(uid))
            let uploaded = try await client.execute(
                uri: "/v1/files?name=note.txt&protected=true", method: .post,
                headers: [.authorization: "Bearer \(token(sender))", .contentType: "text/plain"],
                body: ByteBuffer(string: "a note")
            ) { response in
                (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
            }
            let fileID = try #require(uploaded?["id"] as? Int)

            let sent = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(sender),
                body: #"{"content":"with a file","uid":"f-1","fileId":\#(fileID)}"#)
            let answered = try #require(sent.json["file"] as? [String: Any])
            let events = await receive(subscriber, on: [Topic.room(uid)]) { envelope in
                (envelope["data"] as? [String: Any])?["uid"] as? String == "f-1"
            }
            let data = try #require(events[Topic.room(uid)]?["data"] as? [String: Any])
            let file = try #require(data["file"] as? [String: Any])
            for key in ["id", "name", "size", "mimeType", "checksum", "protected", "uploadedById"] {
                #expect("\(file[key] ?? "nil")" == "\(answered[key] ?? "nil")", "\(key)")
            }
            // Signed when it was encoded: the expiry may differ by a second, the key may not.
            let link = try #require(file["url"] as? String)
            let url = try #require(URLComponents(string: link))
            let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(answered["protected"] as? Bool == true)
            #expect(
                AccountsHarness.fileLinks.verify(
                    path: url.path, expires: Int64(query["expires"] ?? "") ?? 0, signature: query["signature"] ?? ""))
        }
    }
}
