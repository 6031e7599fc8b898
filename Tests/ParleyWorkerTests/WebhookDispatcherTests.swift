import Foundation
import Logging
import ParleyCore
import Synchronization
import Testing

@testable import ParleyWorker

/// A lane's deliveries go in order until one is to be tried again (the rest given back); a
/// dead one does not hold the lane; a bot's answer is said once, under the delivery's id.
struct WebhookDispatcherTests {
    final class Store: WebhookDeliveryStore {
        let finished = Mutex<[(id: String, outcome: WebhookDeliveryOutcome, error: String?)]>([])
        let released = Mutex<[String]>([])
        /// Deliveries whose attempt cannot be recorded (PostgreSQL away).
        let unrecordable = Mutex<Set<String>>([])
        /// How many more times recording events fails (PostgreSQL away), and the calls made.
        let recordFailures = Mutex(0)
        let recordCalls = Mutex(0)

        func subscriptions() async throws -> WebhookSubscriptions {
            WebhookSubscriptions(kinds: [], botCommands: false)
        }
        func record(_ events: [QueuedWebhookEvent]) async throws {
            recordCalls.withLock { $0 += 1 }
            let fails = recordFailures.withLock { failures in
                defer { failures = max(0, failures - 1) }
                return failures > 0
            }
            if fails { throw Unreachable() }
        }
        func record(commands: [BotCommand], at timestamp: Date) async throws {}
        func claimDue(lanes: Int, perLane: Int, lease: Duration) async throws -> [[DueWebhookDelivery]] { [] }
        func release(_ deliveryIDs: [String]) async throws { released.withLock { $0 += deliveryIDs } }
        func finish(_ delivery: DueWebhookDelivery, attempt: WebhookDelivery.Attempt, next: WebhookDeliveryOutcome)
            async throws -> Webhook?
        {
            if unrecordable.withLock({ $0.contains(delivery.id) }) { throw Unreachable() }
            finished.withLock { $0.append((delivery.id, next, attempt.error)) }
            return nil
        }

        struct Unreachable: Error {}
    }

    /// Answers each URL's requests as the test says: a status and a body, or a failure.
    final class Transport: WebhookTransport {
        let answers: [String: Result<(Int, String), OutboundRequestFailure>]
        init(_ answers: [String: Result<(Int, String), OutboundRequestFailure>]) { self.answers = answers }

        func post(_ url: String, headers: [(String, String)], body: Data, timeout: Duration) async throws
            -> (status: Int, body: Data)
        {
            let (status, answer) = try (answers[url] ?? .success((200, ""))).get()
            return (status, Data(answer.utf8))
        }
        func shutdown() async throws {}
    }

    final class Replies: BotReplies {
        let said = Mutex<[(String, Int64, Int64)]>([])
        func post(_ message: NewMessage, as botID: Int64, in roomID: Int64) async throws {
            said.withLock { $0.append((message.content + "|" + message.uid, botID, roomID)) }
        }
    }

    static func delivery(_ id: String, url: String, attempts: Int = 0, bot: Int64? = nil) -> DueWebhookDelivery {
        var due = DueWebhookDelivery(
            id: id, webhookID: 1, url: url, key: Array(repeating: 7, count: 32), body: "{}", firstAttemptAt: nil,
            attempts: attempts, failingSince: nil)
        due.botID = bot
        due.roomID = 12
        return due
    }

    func dispatcher(_ store: Store, _ transport: Transport, _ replies: Replies = Replies()) -> WebhookDispatcher {
        WebhookDispatcher(store: store, transport: transport, replies: replies, logger: Logger(label: "test"))
    }

    static let job = QueuedWebhookEvent.job([
        QueuedWebhookEvent(id: "881-0", type: .messageCreated, roomId: 12, timestamp: Date(), data: "{}")
    ])

    /// The events not recorded (PostgreSQL away): the job fails, for its queue to try again
    /// (in place: the webhooks' queue holds its order, `RedisJobQueueTests`).
    @Test func eventsThatCannotBeRecordedFailTheJobForItsQueueToTryAgain() async throws {
        let store = Store()
        store.recordFailures.withLock { $0 = 1 }
        await #expect(throws: Store.Unreachable.self) {
            try await dispatcher(store, Transport([:])).record(job: Self.job)
        }
        try await dispatcher(store, Transport([:])).record(job: Self.job)
        #expect(store.recordCalls.withLock { $0 } == 2)
    }

    @Test func aLaneStopsAtARetryAndGivesTheRestBack() async {
        let store = Store()
        let transport = Transport([
            "https://b.example/down": .failure(OutboundRequestFailure("connection refused")),
            "https://b.example/big": .success((500, "")),
        ])
        await dispatcher(store, transport).send([
            Self.delivery("a", url: "https://b.example/up"), Self.delivery("b", url: "https://b.example/down"),
            Self.delivery("c", url: "https://b.example/up"), Self.delivery("d", url: "https://b.example/up"),
        ])
        let finished = store.finished.withLock { $0 }
        #expect(finished.map(\.id) == ["a", "b"])
        #expect(finished[0].outcome == .succeeded && finished[1].error == "connection refused")
        if case .retry = finished[1].outcome {} else { Issue.record("b is tried again: \(finished[1].outcome)") }
        #expect(store.released.withLock { $0 } == ["c", "d"])
    }

    @Test func aDeadDeliveryDoesNotHoldItsLane() async {
        let store = Store()
        // Failing since 25 hours: this attempt is its last.
        var dead = Self.delivery("a", url: "https://b.example/down", attempts: 30)
        dead = DueWebhookDelivery(
            id: dead.id, webhookID: 1, url: dead.url, key: dead.key, body: dead.body,
            firstAttemptAt: Date().addingTimeInterval(-25 * 3600), attempts: 30, failingSince: nil)
        let transport = Transport(["https://b.example/down": .success((503, ""))])
        await dispatcher(store, transport).send([dead, Self.delivery("b", url: "https://b.example/up")])
        #expect(store.finished.withLock { $0 }.map(\.outcome) == [.failed(disable: false), .succeeded])
        #expect(store.released.withLock { $0 }.isEmpty)
    }

    @Test func aBotsAnswerIsSaidOnceUnderTheDeliverysIDAndAnyOtherAnswerFails() async {
        let store = Store()
        let replies = Replies()
        let transport = Transport([
            "https://bot.example/json": .success((200, #"{"content":"pong"}"#)),
            "https://bot.example/text": .success((200, "pong")),
            "https://bot.example/empty": .success((204, "")),
            "https://bot.example/down": .failure(OutboundRequestFailure("timed out")),
        ])
        await dispatcher(store, transport, replies).send([
            Self.delivery("cmd_1", url: "https://bot.example/json", bot: 9),
            Self.delivery("cmd_2", url: "https://bot.example/text", bot: 9),
            Self.delivery("cmd_3", url: "https://bot.example/empty", bot: 9),
            Self.delivery("cmd_4", url: "https://bot.example/down", bot: 9),
        ])
        let said = replies.said.withLock { $0 }
        #expect(said.count == 1 && said.first?.0 == "pong|cmd_1" && said.first?.1 == 9 && said.first?.2 == 12)
        let finished = store.finished.withLock { $0 }
        #expect(finished.map(\.outcome) == [.succeeded, .failed(disable: false), .succeeded, .failed(disable: false)])
        #expect(finished[3].error == "timed out")
    }

    /// An attempt that cannot be recorded stops its lane: the delivery stays leased, so what
    /// follows it waits until it is sent again (a later event never overtakes it).
    @Test func aLaneStopsWhereAnAttemptCannotBeRecorded() async {
        let store = Store()
        store.unrecordable.withLock { $0 = ["b"] }
        await dispatcher(store, Transport([:])).send([
            Self.delivery("a", url: "https://b.example/up"), Self.delivery("b", url: "https://b.example/up"),
            Self.delivery("c", url: "https://b.example/up"),
        ])
        #expect(store.finished.withLock { $0 }.map(\.id) == ["a"])
        #expect(store.released.withLock { $0 }.isEmpty)
    }

    /// A lane whose lease would run out before another attempt ends gives the rest back.
    @Test func aLaneStopsBeforeItsLeaseRunsOut() async {
        let store = Store()
        await dispatcher(store, Transport([:])).send(
            [Self.delivery("a", url: "https://b.example/up"), Self.delivery("b", url: "https://b.example/up")],
            leasedUntil: .now + .seconds(3))
        #expect(store.finished.withLock { $0 }.isEmpty)
        #expect(store.released.withLock { $0 } == ["a", "b"])
    }
}
