import Logging
import ParleyCore
import ParleyRuntime
import ServiceLifecycle

/// Feeds `chat-in` messages from the shared subscriptions `$share/parley-ingest/chat-in/+`
/// and `…/chat-in/+/+` to a handler; several ingest processes share the input.
///
/// Messages are handled in `lanes` concurrent lanes chosen by topic: one room's input stays
/// in one lane, in arrival order, while different rooms are stored in parallel. Each lane
/// hands over everything queued for it at once (up to `batchLimit`), so the handler stores
/// a burst in one transaction (a group commit) instead of one commit per message. A lane
/// starts its commits at least `commitInterval` apart: a lane whose last commit began longer
/// ago stores a message at once, a busy one gathers what arrives meanwhile, so its commits
/// grow with the load instead of their number (see <doc:MessagePipelinePerformance>).
///
/// The client's acknowledgements wait until the handler has stored or refused what it
/// received (``MQTTClient/acknowledgementGate``): a process killed with a batch in hand has
/// acknowledged none of it, and a kept session gets it again. So the client is the ingest's
/// own: what the handler publishes goes through another client, or it would wait for itself.
///
/// With `progressEvery`, it tells Parley's broker plugin what it settled (``IngestProgress``),
/// through this client so that a report follows the acknowledgements it counts: the plugin
/// refuses `chat-in` unacknowledged while the ingest is too far behind, instead of the broker
/// dropping what overflows the ingest's queue (<doc:IngestAdmission>).
public struct IngestConsumer: Service {
    public static let subscriptions = Topic.ingestSubscriptions
    /// The Receive Maximum for the ingest's client: its acknowledgements wait for a batch's
    /// commit, and behind a full window the broker queues at most `max_queued_messages`
    /// (10,000) and drops the rest. 10,000 in flight is ten seconds of input at 1,000
    /// messages/s to cover a stalled commit.
    public static let receiveMaximum = 10_000
    let client: MQTTClient
    let logger: Logger
    let lanes: Int
    let batchLimit: Int
    let commitInterval: Duration
    /// The client's session outlives the process (``MQTTConfiguration/sessionExpiry``): the
    /// subscription stays through a stop, so the broker queues chat-in for the restart.
    let keepsSubscription: Bool
    let handle: @Sendable (_ batch: [ChatInput]) async -> Void
    let progressEvery: Duration?
    private let queues: [BatchQueue<ChatInput>]
    private let progress = IngestProgressMeter(idleEvery: 10)

    /// Routes the client's chat-in to the lanes at once, before the client connects: a kept
    /// session's queued input arrives right after the CONNACK, before ``run()``.
    ///
    /// - Parameter senderStampKey: with a key, a `parley-user` stamp counts only when its
    ///   `parley-user-signature` verifies (``SenderStamp``): an unsigned or wrongly signed one
    ///   reaches the handler as no sender, which nobody vouches for. Nil passes the property on
    ///   as it came, for `PARLEY_INGEST_SENDER=topic`, which ignores it.
    /// - Parameter progressEvery: how often to report progress to the broker plugin; nil for
    ///   a broker without it (EMQX).
    public init(
        client: MQTTClient, logger: Logger, lanes: Int, batchLimit: Int, commitInterval: Duration,
        keepsSubscription: Bool = false, senderStampKey: SenderStampKey?, progressEvery: Duration? = nil,
        handle: @escaping @Sendable (_ batch: [ChatInput]) async -> Void
    ) {
        precondition(lanes > 0 && batchLimit > 0, "at least one lane and one message per batch")
        self.client = client
        self.logger = logger
        self.lanes = lanes
        self.batchLimit = batchLimit
        self.commitInterval = commitInterval
        self.keepsSubscription = keepsSubscription
        self.handle = handle
        self.progressEvery = progressEvery
        let queues = (0..<lanes).map { _ in BatchQueue<ChatInput>() }
        self.queues = queues
        // Queued on the MQTT client's network thread as they arrive: one hop to a lane task,
        // not one to a consumer task first.
        // A lost connection loses the queued acknowledgements too: the broker sends again
        // what the lanes have not taken, so it is dropped here rather than stored twice.
        client.onConnectionLost { [gate = client.acknowledgementGate] in
            for queue in queues { gate.settle(queue.removeAll()) }
        }
        client.route(topicsWithPrefix: Topic.chatInPrefix) {
            [gate = client.acknowledgementGate, progress] message in
            gate.hold()
            progress.receivedOne()
            queues[Self.lane(of: message.topic, among: queues.count)].append(
                ChatInput(
                    topic: message.topic, payload: message.payload, sender: Self.sender(of: message, senderStampKey))
            )
        }
    }

    public func run() async throws {
        defer { client.removeRoute(topicsWithPrefix: Topic.chatInPrefix) }
        try await withThrowingDiscardingTaskGroup { group in
            for queue in queues {
                group.addTask {
                    var due: ContinuousClock.Instant?
                    while let batch = await queue.next(upTo: batchLimit, gatheringUntil: due) {
                        due = .now + commitInterval
                        await handle(batch)
                        client.acknowledgementGate.settle(batch.count)
                        progress.settled(batch.count)
                    }
                }
            }
            let reporting = progressEvery.map { every in Task { await reportProgress(every: every) } }
            // On shutdown the client stops reading (what the broker would still send stays
            // with it) and the subscription goes (the group shares the input without us);
            // then the lanes finish and settle what they were given, so its acknowledgements
            // go out before the client disconnects.
            defer {
                reporting?.cancel()
                for queue in queues { queue.finish() }
            }
            try await subscribe()
            try await withGracefulShutdownHandler {
                try await cancelWhenGracefulShutdown {
                    // Until the client shuts down: other topics are not the ingest's.
                    for await _ in client.messages {}
                }
            } onGracefulShutdown: {
                client.stopReading()
                if !keepsSubscription {
                    for filter in Self.subscriptions { try? client.unsubscribe(filter) }
                }
            }
        }
    }

    /// Reports until cancelled. Through the ingest's own client, whose writes wait while it
    /// holds a message: a report goes out after the acknowledgements of what it counts, and a
    /// report that cannot go (no connection) is not needed, since the broker resends what was
    /// not acknowledged.
    private func reportProgress(every interval: Duration) async {
        // A tick every interval for as long as the worker runs: a deadline wakes no
        // libdispatch timer thread.
        while true {
            await Deadlines.shared.sleep(for: interval)
            if Task.isCancelled { return }
            guard let report = progress.report(holding: !client.acknowledgementGate.isOpen) else { continue }
            try? client.publishWithoutWaiting(topic: IngestProgress.topic, payload: Array(report.json().utf8), qos: 0)
        }
    }

    /// Subscribes after the lanes started: a kept session's queue, arriving first, holds the
    /// client's writes (this SUBSCRIBE too) until the lanes settle it, which may take longer
    /// than the acknowledgement timeout. The filter is kept either way and the SUBSCRIBE goes
    /// out with the writes, so a late SUBACK is no failure.
    private func subscribe() async throws {
        for filter in Self.subscriptions {
            do {
                try await client.subscribe(filter, qos: 1)
            } catch let error as MQTTError where error == .timeout {
                logger.notice(
                    "the ingest's subscription waits behind its backlog; it goes out with the acknowledgements")
            }
        }
    }

    /// The stamped sender, verified when there is a key to verify it with.
    static func sender(of message: MQTTMessage, _ key: SenderStampKey?) -> String? {
        let user = message.userProperties[SenderStamp.userProperty]
        guard let key else { return user }
        return SenderStamp.verifiedSender(
            user: user, signature: message.userProperties[SenderStamp.signatureProperty], topic: message.topic,
            payload: message.payload, key: key)
    }

    /// A stable lane per room (FNV-1a of the topic up to its uid, whichever form names it), so
    /// one room's messages keep their order.
    static func lane(of topic: String, among count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var slashes = 0
        for byte in topic.utf8 {
            if byte == UInt8(ascii: "/") {
                slashes += 1
                if slashes == 2 { break }
            }
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }
}
