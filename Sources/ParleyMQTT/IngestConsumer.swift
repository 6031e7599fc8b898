import Logging
import ServiceLifecycle

/// Feeds `chat-in` messages from the shared subscription `$share/parley-ingest/chat-in/+`
/// to a handler; several ingest processes share the input.
///
/// Messages are handled in `lanes` concurrent lanes chosen by topic: one room's input stays
/// in one lane, in arrival order, while different rooms are stored in parallel (each store
/// is a transaction whose commit waits for the disk; one at a time would cap the whole
/// process at one commit per fsync).
public struct IngestConsumer: Service {
    public static let subscription = "$share/parley-ingest/chat-in/+"
    let client: MQTTClient
    let logger: Logger
    let lanes: Int
    let handle: @Sendable (_ topic: String, _ payload: [UInt8], _ sender: String?) async -> Void

    public init(
        client: MQTTClient, logger: Logger, lanes: Int = 16,
        handle: @escaping @Sendable (_ topic: String, _ payload: [UInt8], _ sender: String?) async -> Void
    ) {
        precondition(lanes > 0, "at least one lane")
        self.client = client
        self.logger = logger
        self.lanes = lanes
        self.handle = handle
    }

    public func run() async throws {
        try await client.subscribe(Self.subscription, qos: 1)
        let queues = (0..<lanes).map { _ in AsyncStream.makeStream(of: MQTTMessage.self) }
        try await withThrowingDiscardingTaskGroup { group in
            for queue in queues {
                group.addTask {
                    for await message in queue.stream {
                        await handle(message.topic, message.payload, message.userProperties["parley-user"])
                    }
                }
            }
            // On shutdown the subscription goes first (the group shares the input without us),
            // then the lanes finish what they were given (the broker has it acknowledged).
            defer { for queue in queues { queue.continuation.finish() } }
            try await withGracefulShutdownHandler {
                try await cancelWhenGracefulShutdown {
                    for await message in client.messages where message.topic.hasPrefix("chat-in/") {
                        queues[Self.lane(of: message.topic, among: queues.count)].continuation.yield(message)
                    }
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
