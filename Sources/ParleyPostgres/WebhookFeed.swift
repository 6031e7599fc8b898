import Foundation
import Logging
import ParleyCore
import Synchronization

/// What the outbox relay hands the webhooks: each batch's events that some enabled webhook
/// subscribes to (and new messages that may be bots' commands), as one job of their queue. Which types are subscribed is read at most every
/// two seconds, so a relay without webhooks pays a lock per batch, not a query.
public final class WebhookFeed: Sendable {
    let queue: any JobQueue
    let store: any WebhookDeliveryStore
    let logger: Logger
    private let subscribed = Mutex<(subscriptions: WebhookSubscriptions, readAt: ContinuousClock.Instant?)>(
        (WebhookSubscriptions(kinds: [], botCommands: false), nil))
    static let refresh: Duration = .seconds(2)

    public init(queue: any JobQueue, store: any WebhookDeliveryStore, logger: Logger) {
        self.queue = queue
        self.store = store
        self.logger = logger
    }

    /// The job of the rows' subscribed events; nil when there are none. Each event's id is its
    /// outbox row's (and its place among the row's events), so a batch relayed twice is
    /// delivered once.
    func job(of rows: [OutboxBatchStatement.Row], at now: Date = Date()) async -> String? {
        let subscriptions = await subscriptions()
        guard !subscriptions.isEmpty else { return nil }
        var events: [QueuedWebhookEvent] = []
        for row in rows {
            guard let event = row.event else { continue }
            for (index, told) in WebhookEvent.of(event).enumerated()
            where subscriptions.kinds.contains(told.kind) || (subscriptions.botCommands && Self.isCommand(event)) {
                events.append(
                    QueuedWebhookEvent(
                        id: "\(row.id)-\(index)", type: told.kind, roomId: told.roomID, timestamp: now, data: told.data)
                )
            }
        }
        return events.isEmpty ? nil : QueuedWebhookEvent.job(events)
    }

    /// A new message a bot may hear (``ParleyCore/BotCommand`` says which do).
    private static func isCommand(_ event: DomainEvent) -> Bool {
        if case .messageCreated(let message) = event { return message.content.hasPrefix("/") }
        return false
    }

    private func subscriptions() async -> WebhookSubscriptions {
        let now = ContinuousClock.now
        let (subscriptions, readAt) = subscribed.withLock { $0 }
        if let readAt, now - readAt < Self.refresh { return subscriptions }
        do {
            let fresh = try await store.subscriptions()
            subscribed.withLock { $0 = (fresh, now) }
            return fresh
        } catch {
            // Unknown: every event is queued (the webhooks role records only what an enabled
            // webhook subscribes to), so none a webhook wants is skipped meanwhile.
            logger.warning("webhook subscriptions not read", metadata: ["error": "\(error)"])
            return .all
        }
    }
}
