import Foundation
import Logging
import ParleyCore
import Synchronization
import Testing

@testable import ParleyPostgres

/// What the relay hands the webhooks: only subscribed events, read at most every two seconds,
/// and everything while the subscriptions cannot be read (none a webhook wants is skipped).
struct WebhookFeedTests {
    final class Store: WebhookDeliveryStore {
        let kinds = Mutex<Result<Set<WebhookEvent.Kind>, any Error>>(.success([]))
        let botCommands = Mutex(false)
        let reads = Mutex(0)

        func subscriptions() async throws -> WebhookSubscriptions {
            reads.withLock { $0 += 1 }
            return WebhookSubscriptions(
                kinds: try kinds.withLock { $0 }.get(), botCommands: botCommands.withLock { $0 })
        }
        func record(_ events: [QueuedWebhookEvent]) async throws {}
        func record(commands: [BotCommand], at timestamp: Date) async throws {}
        func claimDue(lanes: Int, perLane: Int, lease: Duration) async throws -> [[DueWebhookDelivery]] { [] }
        func release(_ deliveryIDs: [String]) async throws {}
        func finish(_ delivery: DueWebhookDelivery, attempt: WebhookDelivery.Attempt, next: WebhookDeliveryOutcome)
            async throws -> Webhook?
        { nil }
    }

    struct Unreachable: Error {}

    struct NoQueue: JobQueue {
        func enqueue(_ job: String) async throws {}
    }

    static func row(_ id: Int64, _ event: DomainEvent) -> OutboxBatchStatement.Row {
        OutboxBatchStatement.Row(id: id, events: [], fanout: [], traceparent: nil, unreadable: nil, event: event)
    }

    let rows = [
        row(1, .userBlocked(Blocking(blockerId: 1, blockedId: 2))),
        row(2, .membersChanged(MembersChanged(roomId: 5, byId: 1, serial: 1, addedIds: [3], removedIds: [4]))),
    ]

    @Test func onlySubscribedEventsAreQueuedEachUnderItsRowsID() async throws {
        let store = Store()
        store.kinds.withLock { $0 = .success([.memberRemoved]) }
        let feed = WebhookFeed(queue: NoQueue(), store: store, logger: Logger(label: "test"))
        let job = try #require(await feed.job(of: rows))
        let events = try QueuedWebhookEvent.events(ofJob: job)
        #expect(events.map(\.type) == [.memberRemoved] && events.map(\.id) == ["2-1"] && events[0].roomId == 5)
        // Read again only after two seconds.
        _ = await feed.job(of: rows)
        #expect(store.reads.withLock { $0 } == 1)
    }

    @Test func noSubscriptionQueuesNothingAndUnreadableSubscriptionsQueueAll() async throws {
        let store = Store()
        let feed = WebhookFeed(queue: NoQueue(), store: store, logger: Logger(label: "test"))
        #expect(await feed.job(of: rows) == nil)
        store.kinds.withLock { $0 = .failure(Unreachable()) }
        let failing = WebhookFeed(queue: NoQueue(), store: store, logger: Logger(label: "test"))
        let job = try #require(await failing.job(of: rows))
        #expect(try QueuedWebhookEvent.events(ofJob: job).map(\.type) == [.userBlocked, .memberAdded, .memberRemoved])
    }

    static func message(_ id: Int64, _ content: String) -> DomainEvent {
        .messageCreated(
            Message(
                id: id, seq: id, chatRoomId: 5, chatRoomUid: "room-uid-0000000001", sentById: 1, content: content,
                uid: "u\(id)", fileId: nil, createdAt: Date()))
    }

    @Test func whileABotHearsCommandsNewMessagesStartingWithASlashAreQueuedAndNoOthers() async throws {
        let store = Store()
        store.botCommands.withLock { $0 = true }
        let feed = WebhookFeed(queue: NoQueue(), store: store, logger: Logger(label: "test"))
        let job = try #require(
            await feed.job(of: [
                Self.row(1, Self.message(1, "hello")), Self.row(2, Self.message(2, "/echo hi")),
                Self.row(3, .userBlocked(Blocking(blockerId: 1, blockedId: 2))),
            ]))
        let events = try QueuedWebhookEvent.events(ofJob: job)
        #expect(events.map(\.id) == ["2-0"] && events.map(\.type) == [.messageCreated])
        #expect(
            BotCommand.of(events[0])
                == BotCommand(
                    eventID: "2-0", roomID: 5, senderID: 1, botName: "echo", args: "hi", message: events[0].data))
    }
}
