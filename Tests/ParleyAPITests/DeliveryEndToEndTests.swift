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
import Synchronization
import Testing

@testable import ParleyAPI
@testable import parley

/// REST changes reach clients through the real broker: outbox relay → MQTT, fan-out job →
/// Redis Streams → MQTT.
struct DeliveryEndToEndTests {
    /// Runs `body` with the API, an outbox relay and a fan-out consumer, and an MQTT subscriber;
    /// `inline`: the relay publishes the copies of rooms the fan-out keeps, as in one worker
    /// process running both roles. `queued` counts the relay's fan-out jobs. `window`: busy
    /// rooms' notification copies held for a summary per window (none: every copy at once).
    func withPipeline(
        inline: Bool = false, queued: QueueCounter = QueueCounter(), window: Duration? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, MQTTClient) async throws -> Void
    ) async throws {
        let harness = try await APIHarness.make()
        let services = try TestServices.shared()
        let publisher = try await services.connectedMQTTClient()
        let subscriber = try await services.connectedMQTTClient()
        let queue = RedisJobQueue(
            name: "fanout-\(UUID().uuidString.prefix(8))", pool: harness.redis,
            configuration: .init(visibilityTimeout: .seconds(1), blockFor: .milliseconds(200)))
        var parts = harness.workerParts()
        parts.outbox = WorkerGraph.Outbox(
            publisher: publisher, fanoutJobs: CountingQueue(base: queue, counter: queued), stallLimit: .seconds(60),
            plansInline: inline,
            notificationWindow: window.map { WorkerGraph.NotificationWindow(length: $0, summaries: queue) })
        parts.fanout = WorkerGraph.Fanout(publisher: publisher, queue: queue, consumers: 1, chunkSize: 500)
        let workers = WorkerGraph(parts).serviceGroup()
        try await harness.run { client in
            let running = Task { try await workers.run() }
            try await body(client, subscriber)
            await workers.triggerGracefulShutdown()
            try await running.value
        }
        await publisher.shutdown()
        await subscriber.shutdown()
    }

    /// Events of `type` received per topic until `wanted` holds for every topic in `topics`.
    /// Tests share the broker and each has a database of its own, so notification topics
    /// (by user id) and message ids repeat across tests: `wanted` must name the room (its
    /// uid is unique), not only an id.
    func receive<Payload: Decodable>(
        _ type: String, of payload: Payload.Type, _ subscriber: MQTTClient, on topics: Set<String>,
        within limit: Duration = .seconds(10), where wanted: @escaping (Payload) -> Bool
    ) async -> [String: Envelope<Payload>] {
        var missing = topics
        var found: [String: Envelope<Payload>] = [:]
        let deadline = ContinuousClock.now + limit
        while !missing.isEmpty && ContinuousClock.now < deadline {
            guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)),
                let envelope = try? JSONCoding.decoder.decode(Envelope<Payload>.self, from: Data(message.payload)),
                envelope.type == type, wanted(envelope.data)
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

            let sent = try await client.send("over MQTT", uid: "e2e-1", to: roomID, as: users[1])
            let topics = Set([Topic.room(uid)] + users.map { Topic.notifications(userID($0)) })
            let events = await receive("new-message-notification", of: Message.self, subscriber, on: topics) {
                $0.chatRoomUid == sent.chatRoomUid && $0.id == sent.id
            }
            #expect(Set(events.keys) == topics)
            let canonical = try #require(events[Topic.room(uid)])
            // What the send answered, stored and delivered alike.
            #expect(canonical.data == sent)
            #expect(canonical.data.seq == 2 && canonical.data.chatRoomUid == uid)
            #expect(canonical.data.sentById == userID(users[1]))
            #expect(!canonical.hash.isEmpty)
            // The same event, with the same hash, on every topic.
            #expect(Set(events.values.map(\.hash)).count == 1)
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

            func receive(_ kind: String, on topic: String) async -> RoomEvent.Change? {
                await self.receive("chatroom-change-notification", of: RoomEvent.Change.self, subscriber, on: [topic]) {
                    $0.chatRoomId == roomID && $0.change == kind
                }[topic]?.data
            }
            _ = try await client.json(
                .put, "/v1/rooms/\(roomID)/members/\(userID(users[3]))", token: token(users[0]),
                body: #"{"role":"reader"}"#)
            #expect(await receive("added", on: newcomer)?.editById == userID(users[0]))
            _ = try await client.json(
                .delete, "/v1/rooms/\(roomID)/members/\(userID(users[3]))", token: token(users[0]))
            #expect(await receive("removed", on: newcomer) != nil)
            _ = try await client.json(
                .patch, "/v1/rooms/\(roomID)", token: token(users[0]), body: #"{"name":"Renamed"}"#)
            #expect(await receive("renamed", on: Topic.room(uid)) != nil)
        }
    }

    /// A read, from one device, clears the room's notifications on every device of the reader:
    /// `notification-cleared` on their own topic, to no one else.
    @Test func aReadClearsTheReadersNotificationsOnTheirOwnTopic() async throws {
        try await withPipeline { client, subscriber in
            let users = try await client.signUp(count: 3)
            let (roomID, uid) = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "C",
                firstMessage: ("hi", "c-0"))
            // Topics and room ids repeat across tests (each has a database of its own): an
            // unusual seq tells this test's event apart.
            for index in 1...6 { try await client.send("more", uid: "c-\(index)", to: roomID, as: users[0]) }
            for user in users { try await subscriber.subscribe(Topic.notifications(userID(user))) }
            _ = try await client.json(.post, "/v1/rooms/\(roomID)/read", token: token(users[1]), body: #"{"seq":7}"#)
            let reader = Topic.notifications(userID(users[1]))
            let cleared = await receive(
                "notification-cleared", of: RoomEvent.NotificationCleared.self, subscriber, on: [reader]
            ) { $0.chatRoomId == roomID && $0.readSeq == 7 }
            #expect(cleared[reader]?.data == .init(chatRoomId: Int64(roomID), readSeq: 7))
            let others = Set(users.filter { $0.user.id != users[1].user.id }.map { Topic.notifications(userID($0)) })
            let elsewhere = await receive(
                "notification-cleared", of: RoomEvent.NotificationCleared.self, subscriber, on: others,
                within: .seconds(2)
            ) { $0.chatRoomId == roomID && $0.readSeq == 7 }
            #expect(elsewhere.isEmpty, "\(uid)")
        }
    }

    /// With the fan-out in the relay's process, a room's messages after its first reach every
    /// member's notification topic without a queue entry: the relay publishes the copies.
    @Test func aRelayBesideTheFanoutPublishesAKeptRoomsCopiesItself() async throws {
        let queued = QueueCounter()
        try await withPipeline(inline: true, queued: queued) { client, subscriber in
            let (a, b) = (try await client.signUp(), try await client.signUp())
            let room = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(b))", token: token(a))
            let topics = Set([a, b].map { Topic.notifications(userID($0)) })
            for topic in topics { try await subscriber.subscribe(topic) }
            func delivered(_ content: String, by sender: LoginResponse) async throws -> Bool {
                let sent = try await client.send(content, uid: content, to: Int(room.id), as: sender)
                let events = await receive("new-message-notification", of: Message.self, subscriber, on: topics) {
                    $0.chatRoomUid == sent.chatRoomUid && $0.id == sent.id
                }
                return Set(events.keys) == topics && events.values.allSatisfy { $0.data == sent }
            }
            // The first message goes through the queue, and its readers are kept.
            #expect(try await delivered("first", by: a))
            let before = queued.count
            for (index, sender) in [b, a, b].enumerated() { #expect(try await delivered("next-\(index)", by: sender)) }
            #expect(queued.count == before)
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
            ) { response in try? JSONCoding.decoder.decode(FileObject.self, from: Data(response.body.readableBytesView))
            }
            let fileID = try #require(uploaded?.id)

            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(roomID)/messages", token: token(sender),
                body: #"{"content":"with a file","uid":"f-1","fileId":\#(fileID)}"#)
            let answered = try #require(sent.file)
            let events = await receive("new-message-notification", of: Message.self, subscriber, on: [Topic.room(uid)])
            {
                $0.uid == "f-1"
            }
            let file = try #require(events[Topic.room(uid)]?.data.file)
            #expect(
                [file.id, file.size, file.uploadedById] == [answered.id, answered.size, answered.uploadedById]
                    && [file.name, file.mimeType, file.checksum] == [
                        answered.name, answered.mimeType, answered.checksum,
                    ]
                    && file.protected == answered.protected)
            // One payload for every member: its links are unsigned (they need a token), while
            // the sender's REST answer has them signed for the sender.
            #expect(answered.protected)
            #expect(file.url == "/v1/files/\(fileID)/content")
            let url = try #require(URLComponents(string: answered.url))
            let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(
                APIHarness.fileLinks.verify(
                    path: url.path, expires: Int64(query["expires"] ?? "") ?? 0, viewer: userID(sender),
                    signature: query["signature"] ?? ""))
        }
    }
}

/// Counts the jobs queued through a ``CountingQueue``.
final class QueueCounter: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add(_ jobs: Int) { value.withLock { $0 += jobs } }
}

/// A queue that counts what is queued through it.
struct CountingQueue: JobQueue {
    let base: any JobQueue
    let counter: QueueCounter

    func enqueue(_ job: String) async throws {
        counter.add(1)
        try await base.enqueue(job)
    }

    func enqueue(contentsOf jobs: [String]) async throws {
        counter.add(jobs.count)
        try await base.enqueue(contentsOf: jobs)
    }
}
