import Foundation
import Logging
import Metrics
import ParleyCore
import ParleyRuntime
import ServiceLifecycle
import Synchronization

/// The `webhooks` role: records the events the relay queued as deliveries to each subscribed
/// webhook (``record(job:)``, the queue's handler), and sends them, lane by lane: each
/// webhook's deliveries of a room in order, up to ten per lease, signed (``ParleyCore/WebhookSignature``), 5 s at
/// most, a body of 256 KiB at most. A failure is retried as ``ParleyCore/WebhookRetryPolicy``
/// says, later events of the room waiting behind it; a delivery still failing after 24 hours
/// is dead, and a webhook failing for three days is disabled (told to the other webhooks as
/// `webhook.disabled`). A slow receiver holds only its own lanes: messages are published by
/// the relay, never wait for a webhook. Commands addressed to bots (``ParleyCore/BotCommand``)
/// are deliveries too, to each bot's webhook, tried once: a JSON answer `{content, metadata?}`
/// within the attempt's 5 s is said in the room as the bot.
public struct WebhookDispatcher: Service {
    let store: any WebhookDeliveryStore
    let transport: any WebhookTransport
    /// Where bots' answers to commands are said.
    let replies: (any BotReplies)?
    let policy: WebhookRetryPolicy
    let logger: Logger
    /// Lanes sent to at once.
    let concurrency: Int
    let attemptLimit: Duration
    static let bodyLimit = 256 * 1024
    private let wake = WakeSignal()
    private let inFlight = LaneCount()

    /// The lanes being sent to.
    private final class LaneCount: Sendable {
        private let value = Mutex(0)
        var count: Int { value.withLock { $0 } }
        func add(_ change: Int) { value.withLock { $0 += change } }
    }

    public init(
        store: any WebhookDeliveryStore, transport: any WebhookTransport, replies: (any BotReplies)?,
        policy: WebhookRetryPolicy = .init(), concurrency: Int = 16, attemptLimit: Duration = .seconds(5),
        logger: Logger
    ) {
        self.store = store
        self.transport = transport
        self.replies = replies
        self.policy = policy
        self.concurrency = concurrency
        self.attemptLimit = attemptLimit
        self.logger = logger
    }

    /// The handler of the webhooks' queue: a relay batch's events become deliveries (an
    /// event queued twice, once), and the sending loop wakes. The queue is serial and holds its
    /// order through a failure (PostgreSQL away: the job is tried again in place), so a room's
    /// events are recorded, and sent, in their order.
    public func record(job: String) async throws {
        let events: [QueuedWebhookEvent]
        do {
            events = try QueuedWebhookEvent.events(ofJob: job)
        } catch {
            throw PermanentJobFailure(reason: "malformed webhook job")
        }
        try await store.record(events)
        try await store.record(commands: events.compactMap(BotCommand.of), at: Date())
        wake.signal()
    }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let free = concurrency - inFlight.count
                var lanes: [[DueWebhookDelivery]] = []
                if free > 0 {
                    do {
                        // A lease outlasts a lane's attempts, so a crashed worker's lanes resume soon.
                        lanes = try await store.claimDue(lanes: free, perLane: Self.perLane, lease: lease)
                    } catch {
                        logger.warning("webhook deliveries not read", metadata: ["error": "\(error)"])
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
                        continue
                    }
                }
                for lane in lanes {
                    inFlight.add(1)
                    let leasedUntil = ContinuousClock.now + lease
                    group.addTask {
                        await send(lane, leasedUntil: leasedUntil)
                        inFlight.add(-1)
                        wake.signal()
                    }
                }
                if lanes.isEmpty {
                    // A lane done, a job recorded, or a retry falling due (looked for within
                    // half a second) wakes the loop.
                    await wake.wait(upTo: .milliseconds(500))
                }
            }
        }
        try? await transport.shutdown()
    }

    /// Deliveries one lane is leased at once: its next events follow without a claim each.
    static let perLane = 10
    /// How long a lane's deliveries are leased: a lane whose receiver is slow stops before it
    /// runs out and gives the rest back; a crashed worker's lanes resume after it.
    var lease: Duration { attemptLimit * 6 }

    /// A lane's leased deliveries in order, until one is to be tried again later: the rest
    /// wait behind it (their leases given back). A dead one does not hold the lane. The lane
    /// also stops where an attempt could not be recorded (the delivery stays leased, so nothing
    /// after it goes before it is sent again) and before its lease could run out mid-attempt
    /// (another worker may then take the lane).
    func send(_ lane: [DueWebhookDelivery], leasedUntil: ContinuousClock.Instant = .now + .seconds(3600)) async {
        for (index, delivery) in lane.enumerated() {
            let rest = lane.dropFirst(index + 1).map(\.id)
            if ContinuousClock.now + attemptLimit * 2 > leasedUntil {
                await release(Array(lane.dropFirst(index).map(\.id)))
                return
            }
            switch await attempt(delivery) {
            case .retry?:
                await release(rest)
                return
            case nil:
                return
            case .succeeded?, .failed?:
                continue
            }
        }
    }

    private func release(_ ids: [String]) async {
        do {
            try await store.release(ids)
        } catch {
            logger.warning("webhook leases not given back", metadata: ["error": "\(error)"])
        }
    }

    /// One attempt of one delivery, recorded with what follows it (returned); nil when it
    /// could not be recorded.
    @discardableResult
    func attempt(_ delivery: DueWebhookDelivery) async -> WebhookDeliveryOutcome? {
        let started = Date()
        let clock = ContinuousClock.now
        var answer: (status: Int, body: Data)?
        var failure: String?
        let body = Data(delivery.body.utf8)
        if body.count > Self.bodyLimit {
            failure = "the body is over 256 KiB"
        } else {
            do {
                let headers =
                    WebhookSignature(key: delivery.key).headers(
                        id: delivery.id, timestamp: Int(started.timeIntervalSince1970), body: body)
                    + [("content-type", "application/json"), ("user-agent", "Parley-Webhooks/1")]
                answer = try await transport.post(delivery.url, headers: headers, body: body, timeout: attemptLimit)
            } catch let refused as ParleyError {
                failure = refused.detail
            } catch let unanswered as OutboundRequestFailure {
                failure = unanswered.reason
            } catch {
                failure = "request failed"
            }
        }
        let elapsed = ContinuousClock.now - clock
        var succeeded = answer.map { (200..<300).contains($0.status) } ?? false
        var next: WebhookDeliveryOutcome =
            if succeeded {
                .succeeded
            } else if body.count > Self.bodyLimit || delivery.botID != nil {
                // A command answered late is answered to no one: it is not tried again.
                .failed(disable: false)
            } else {
                policy.afterFailure(
                    attempt: delivery.attempts + 1, firstAttemptAt: delivery.firstAttemptAt ?? started,
                    failingSince: delivery.failingSince ?? started, now: Date())
            }
        if succeeded, let botID = delivery.botID, let answer {
            do {
                try await say(answer.body, of: delivery, as: botID)
            } catch let refused as ParleyError {
                (succeeded, next, failure) = (false, .failed(disable: false), refused.detail)
            } catch {
                // Not stored (PostgreSQL away): asked again later; the answer's uid is the
                // delivery's, so a second answer is stored once.
                (succeeded, failure) = (false, "the answer was not stored")
                next = policy.afterFailure(
                    attempt: delivery.attempts + 1, firstAttemptAt: delivery.firstAttemptAt ?? started,
                    failingSince: delivery.failingSince ?? started, now: Date())
            }
        }
        let attempt = WebhookDelivery.Attempt(
            at: started, statusCode: answer?.status, error: failure, durationMs: Int(elapsed.seconds * 1000))
        Counter(
            label: "parley_webhook_attempts_total",
            dimensions: [
                ("outcome", succeeded ? "succeeded" : "failed"), ("kind", delivery.botID == nil ? "event" : "command"),
            ]
        ).increment()
        if !succeeded, delivery.botID != nil {
            logger.warning(
                "bot command not answered", metadata: ["delivery_id": "\(delivery.id)", "error": "\(failure ?? "")"])
        }
        // PostgreSQL away for a moment (a restart) should not hold the lane for a whole lease:
        // the record is tried three times, a second apart.
        var disabled: Webhook?
        for round in 1...3 {
            do {
                disabled = try await store.finish(delivery, attempt: attempt, next: next)
                break
            } catch {
                logger.warning("webhook attempt not recorded", metadata: ["error": "\(error)", "try": "\(round)"])
                if round == 3 { return nil }
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            }
        }
        if let disabled {
            do {
                try await announce(disabled)
            } catch {
                logger.warning("webhook's disabling not told", metadata: ["error": "\(error)"])
            }
        }
        return next
    }

    /// A bot's answer to a command, said in the room as the bot (nothing for an empty answer).
    private func say(_ answer: Data, of delivery: DueWebhookDelivery, as botID: Int64) async throws {
        guard let message = try BotAnswer.message(of: answer, uid: delivery.id) else { return }
        guard let replies else { throw ParleyError(.unavailable, "bots' answers are not said here") }
        try await replies.post(message, as: botID, in: delivery.roomID)
    }

    /// A webhook disabled after three days of failures: counted, logged, and told to the
    /// other webhooks that subscribe to `webhook.disabled`.
    private func announce(_ webhook: Webhook) async throws {
        Counter(label: "parley_webhooks_disabled_total").increment()
        logger.error(
            "webhook disabled after failing for three days", metadata: ["webhook_id": "\(webhook.id)"])
        let data = WebhookEvent.json(WebhookEvent.WebhookState(webhookId: webhook.id, url: webhook.url))
        try await store.record([
            QueuedWebhookEvent(
                id: "disabled-\(webhook.id)-\(Int(Date().timeIntervalSince1970))", type: .webhookDisabled, roomId: nil,
                timestamp: Date(), data: data)
        ])
    }
}
