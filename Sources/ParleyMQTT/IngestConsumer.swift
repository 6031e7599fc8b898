import Logging
import ParleyCore
import ServiceLifecycle

/// Feeds `chat-in` messages from the shared subscription `$share/parley-ingest/chat-in/+`
/// to a handler; several ingest processes share the input.
///
/// Messages are handled in `lanes` concurrent lanes chosen by topic: one room's input stays
/// in one lane, in arrival order, while different rooms are stored in parallel. Each lane
/// hands over everything queued for it at once (up to `batchLimit`), so the handler stores
/// a burst in one transaction (a group commit) instead of one commit per message.
public struct IngestConsumer: Service {
    public static let subscription = Topic.ingestSubscription
    let client: MQTTClient
    let logger: Logger
    let lanes: Int
    let batchLimit: Int
    let handle: @Sendable (_ batch: [ChatInput]) async -> Void

    public init(
        client: MQTTClient, logger: Logger, lanes: Int, batchLimit: Int,
        handle: @escaping @Sendable (_ batch: [ChatInput]) async -> Void
    ) {
        precondition(lanes > 0 && batchLimit > 0, "at least one lane and one message per batch")
        self.client = client
        self.logger = logger
        self.lanes = lanes
        self.batchLimit = batchLimit
        self.handle = handle
    }

    public func run() async throws {
        let queues = (0..<lanes).map { _ in BatchQueue<ChatInput>() }
        // Queued on the MQTT client's network thread as they arrive: one hop to a lane task,
        // not one to a consumer task first.
        client.route(topicsWithPrefix: Topic.chatInPrefix) { message in
            queues[Self.lane(of: message.topic, among: queues.count)].append(
                ChatInput(topic: message.topic, payload: message.payload, sender: message.userProperties["parley-user"])
            )
        }
        defer { client.removeRoute(topicsWithPrefix: Topic.chatInPrefix) }
        try await client.subscribe(Self.subscription, qos: 1)
        try await withThrowingDiscardingTaskGroup { group in
            for queue in queues {
                group.addTask {
                    while let batch = await queue.next(upTo: batchLimit) { await handle(batch) }
                }
            }
            // On shutdown the subscription goes first (the group shares the input without us),
            // then the lanes finish what they were given (the broker has it acknowledged).
            defer { for queue in queues { queue.finish() } }
            try await withGracefulShutdownHandler {
                try await cancelWhenGracefulShutdown {
                    // Until the client shuts down: other topics are not the ingest's.
                    for await _ in client.messages {}
                }
            } onGracefulShutdown: {
                try? client.unsubscribe(Self.subscription)
            }
        }
    }

    /// A stable lane per topic (FNV-1a), so one room's messages keep their order.
    static func lane(of topic: String, among count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in topic.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(count))
    }
}
