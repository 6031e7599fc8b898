import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyPushSimulator
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import ServiceLifecycle
import Testing

@testable import ParleyAPI
@testable import parley

/// REST changes become pushes: outbox relay → fan-out → `push` jobs → providers (the
/// simulator), with real PostgreSQL, Redis and mosquitto.
struct PushDeliveryTests {
    struct Pipeline: Sendable {
        let client: any TestClientProtocol
        let push: PushFixture
        let pushQueue: RedisJobQueue
        let fanoutQueue: RedisJobQueue
        let database: PostgresPool

        /// Waits until every committed event went through the relay and the fan-out.
        func drained() async throws {
            for _ in 0..<250 {
                let outbox = try await database.client.query(
                    "SELECT count(*) FROM messenger.outbox", logger: .quiet
                ).single(Int64.self)
                if outbox == 0, try await fanoutQueue.depth() == 0 { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw HarnessError("the pipeline did not drain within 5 s")
        }
    }

    func withPipeline(
        readPushInterval: Duration = .seconds(10), _ body: @escaping @Sendable (Pipeline) async throws -> Void
    ) async throws {
        let harness = try await APIHarness.make()
        let services = try TestServices.shared()
        let push = try await PushFixture.start()
        let publisher = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        try publisher.start()
        try await publisher.waitUntilConnected(timeout: .seconds(5))
        let suffix = UUID().uuidString.prefix(8)
        let options = RedisJobQueue.Configuration(
            maxAttempts: 4, visibilityTimeout: .seconds(1), blockFor: .milliseconds(100), concurrency: 8)
        let fanoutQueue = RedisJobQueue(name: "fanout-\(suffix)", pool: harness.redis, configuration: options)
        let pushQueue = RedisJobQueue(name: "push-\(suffix)", pool: harness.redis, configuration: options)
        // The relay queues every copy (no inline fan-out), so each push goes through both queues.
        var parts = harness.workerParts()
        parts.outbox = WorkerGraph.Outbox(
            publisher: publisher, fanoutJobs: fanoutQueue, stallLimit: .seconds(60), plansInline: false)
        parts.fanout = WorkerGraph.Fanout(
            publisher: publisher, queue: fanoutQueue, consumers: 1, chunkSize: 500, pushJobs: pushQueue,
            readPushInterval: readPushInterval)
        parts.push = WorkerGraph.Push(queue: pushQueue, senders: try push.senders())
        let workers = WorkerGraph(parts).serviceGroup()
        do {
            try await harness.run { client in
                let running = Task { try await workers.run() }
                do {
                    try await body(
                        Pipeline(
                            client: client, push: push, pushQueue: pushQueue, fanoutQueue: fanoutQueue,
                            database: harness.database))
                } catch {
                    await workers.triggerGracefulShutdown()
                    throw error
                }
                await workers.triggerGracefulShutdown()
                try await running.value
            }
        } catch {
            await push.stop()
            await publisher.shutdown()
            throw error
        }
        await push.stop()
        await publisher.shutdown()
    }

    static func device(_ provider: PushProvider, _ token: String) -> String {
        #"{"platform":"\#(provider == .apns ? "ios" : "android")","pushToken":"\#(token)","pushProvider":"\#(provider.rawValue)"}"#
    }

    /// The pushes of one kind (`new-message`, `added`) received so far, by token; for one
    /// message when `messageID` is given.
    static func pushes(_ fixture: PushFixture, type: String, messageID: Int? = nil) -> [String: ReceivedPush] {
        var found: [String: ReceivedPush] = [:]
        for push in fixture.simulator.received where push.answer == .success {
            let ids = Self.ids(push)
            guard ids.type == type else { continue }
            if let messageID, ids.messageID != "\(messageID)" { continue }
            found[push.token] = push
        }
        return found
    }

    /// A push's `type` and `messageId`, where its provider carries them.
    static func ids(_ push: ReceivedPush) -> (type: String?, messageID: String?) {
        switch push.provider {
        case .apns:
            let parley = (try? push.decoded(APNsPayload.self))?.parley
            return (parley?.type, parley?.messageId)
        case .fcm:
            let data = (try? push.decoded(FCMPayload.self))?.message.data
            return (data?["type"], data?["messageId"])
        case .webhook:
            let data = (try? push.decoded(WebhookPayload.self))?.data
            return (data?["type"], data?["messageId"])
        }
    }

    @Test func membersGetTheRightPushExceptTheSenderTheMutedAndThoseInQuietHours() async throws {
        try await withPipeline { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            let sender = try await client.signUp(device: Self.device(.apns, "sender-\(tag)"))
            let ios = try await client.signUp(device: Self.device(.apns, "ios-\(tag)"))
            let android = try await client.signUp(device: Self.device(.fcm, "android-\(tag)"))
            let muted = try await client.signUp(device: Self.device(.apns, "muted-\(tag)"))
            let sleeping = try await client.signUp(device: Self.device(.apns, "sleeping-\(tag)"))
            let oncall = try await client.signUp(device: Self.device(.webhook, "oncall-\(tag)"))
            let created = try await client.createRoom(
                by: sender, members: [ios, android, muted, sleeping, oncall].map { ($0, "writer") }, name: "Ops",
                firstMessage: ("first", "p-1"))
            let roomID = created.id

            // The first message is pushed to everyone but the creator (it also says they were added).
            _ = try await pipeline.push.received(atLeast: 5)
            let everyone = Set(["ios", "android", "muted", "sleeping", "oncall"].map { "\($0)-\(tag)" })
            #expect(Set(Self.pushes(pipeline.push, type: "new-message").keys) == everyone)
            #expect(Self.pushes(pipeline.push, type: "added").isEmpty)

            // Muted, asleep (quiet hours around now, in another time zone), and on call (asleep,
            // but this room passes quiet hours).
            let zone = "Asia/Tokyo"
            var tokyo = Calendar(identifier: .gregorian)
            tokyo.timeZone = TimeZone(identifier: zone)!
            let hour = tokyo.component(.hour, from: Date())
            let quiet =
                #"{"start":"\#(String(format: "%02d:00", (hour + 23) % 24))","end":"\#(String(format: "%02d:00", (hour + 2) % 24))","timeZone":"\#(zone)"}"#
            for user in [sleeping, oncall] {
                #expect(
                    try await client.json(.put, "/v1/me/quiet-hours", token: token(user), body: quiet).status == .ok)
            }
            let room = "/v1/rooms/\(roomID)/notifications"
            #expect(try await client.json(.put, room, token: token(muted), body: #"{"muted":true}"#).status == .ok)
            #expect(
                try await client.json(
                    .put, room, token: token(oncall), body: #"{"muted":false,"overrideQuietHours":true}"#
                ).status == .ok)

            let sent = try await client.send("Deploy at 5\nplease review", uid: "p-2", to: Int(roomID), as: sender)
            _ = try await pipeline.push.received(atLeast: 8)
            // Give wrongly queued pushes time to show up before checking they did not.
            try await Task.sleep(for: .milliseconds(800))
            let messages = Self.pushes(pipeline.push, type: "new-message", messageID: Int(sent.id))
            #expect(Set(messages.keys) == Set(["ios-\(tag)", "android-\(tag)", "oncall-\(tag)"]))
            #expect(pipeline.push.simulator.received.allSatisfy { $0.problems.isEmpty })

            let apns = try #require(messages["ios-\(tag)"])
            let payload = try apns.decoded(APNsPayload.self)
            #expect(payload.aps.alert?.title == "Ops")
            #expect(payload.aps.alert?.body == "Test User: Deploy at 5 please review")
            // Unread: the first message and this one.
            #expect(payload.aps.badge == 2)
            #expect(apns.headers["apns-collapse-id"] == created.uid)
            #expect(payload.parley.messageId == "\(sent.id)")

            // Being added later is pushed too.
            let newcomer = try await client.signUp(device: Self.device(.apns, "newcomer-\(tag)"))
            let added = try await client.json(
                .put, "/v1/rooms/\(roomID)/members/\(userID(newcomer))", token: token(sender),
                body: #"{"role":"reader"}"#)
            #expect(added.status == .ok)
            _ = try await pipeline.push.received(atLeast: 9)
            let notice = try #require(Self.pushes(pipeline.push, type: "added")["newcomer-\(tag)"])
            #expect(try notice.decoded(APNsPayload.self).aps.alert?.body == "Test User added you to “Ops”")

            let fcm = try #require(messages["android-\(tag)"])
            let message = try fcm.decoded(FCMPayload.self).message
            #expect(message.notification?.title == "Ops")
            #expect(message.data["badge"] == "2")
        }
    }

    /// The fan-out remembers who has no push token; a device registered later must still get
    /// the next message's push (the token's commit moves the version the relay passes on).
    @Test func aDeviceRegisteredAfterTheRoomsFirstMessagesGetsTheNextOnesPush() async throws {
        try await withPipeline { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            let sender = try await client.signUp()
            let peer = try await client.signUp(email: "late-\(tag)@example.com")
            let room = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(peer))", token: token(sender))
            try await client.send("before", uid: "d-1", to: Int(room.id), as: sender)
            // Its fan-out found the peer without a token, and kept that.
            try await pipeline.drained()
            #expect(pipeline.push.simulator.received.isEmpty)

            _ = try await client.decoded(
                LoginResponse.self, .post, "/v1/auth/login",
                body:
                    #"{"email":"late-\#(tag)@example.com","password":"correct horse","device":\#(Self.device(.webhook, "late-\(tag)"))}"#
            )
            let after = try await client.send("after", uid: "d-2", to: Int(room.id), as: sender)
            _ = try await pipeline.push.received(atLeast: 1)
            #expect(
                Set(Self.pushes(pipeline.push, type: "new-message", messageID: Int(after.id)).keys) == ["late-\(tag)"])
        }
    }

    @Test func aDeadTokenIsDeletedAndA429IsRetriedAfterItsDelay() async throws {
        try await withPipeline { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            pipeline.push.simulator.script { _, token, attempt in
                if token.hasPrefix("gone") { return .unregistered }
                if token.hasPrefix("busy") && attempt == 0 { return .tooManyRequests(retryAfter: 1) }
                return .success
            }
            let sender = try await client.signUp()
            let gone = try await client.signUp(device: Self.device(.apns, "gone-\(tag)"))
            let busy = try await client.signUp(device: Self.device(.fcm, "busy-\(tag)"))
            #expect(
                try await client.decoded(DevicesResponse.self, .get, "/v1/devices", token: token(gone)).devices.first?
                    .hasPushToken == true)
            let direct = try await client.json(.put, "/v1/rooms/direct/\(userID(gone))", token: token(sender))
            #expect(direct.status == .created)
            let room = try await client.json(.put, "/v1/rooms/direct/\(userID(busy))", token: token(sender))
            #expect(room.status == .created)

            let received = try await pipeline.push.received(atLeast: 3)
            let busyRequests = received.filter { $0.token == "busy-\(tag)" }
            #expect(busyRequests.map(\.answer) == [.tooManyRequests(retryAfter: 1), .success])
            if busyRequests.count == 2 {
                let waited = busyRequests[0].receivedAt.duration(to: busyRequests[1].receivedAt)
                #expect(waited >= .seconds(1), "retried after \(waited), before Retry-After")
            }
            // The dead token is gone from the device, which itself stays.
            var hasToken = true
            for _ in 0..<100 where hasToken {
                let devices = try await client.json(.get, "/v1/devices", token: token(gone))
                hasToken = (try? decode(DevicesResponse.self, from: devices.text))?.devices.first?.hasPushToken ?? true
                if hasToken { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(!hasToken)
            #expect(try await pipeline.pushQueue.deadLetters().isEmpty)
        }
    }
}
