import Logging
import ServiceLifecycle

/// Feeds `chat-in` messages from the shared subscription `$share/parley-ingest/chat-in/+`
/// to a handler; several ingest processes share the input.
public struct IngestConsumer: Service {
    public static let subscription = "$share/parley-ingest/chat-in/+"
    let client: MQTTClient
    let logger: Logger
    let handle: @Sendable (_ topic: String, _ payload: [UInt8], _ sender: String?) async -> Void

    public init(
        client: MQTTClient, logger: Logger,
        handle: @escaping @Sendable (_ topic: String, _ payload: [UInt8], _ sender: String?) async -> Void
    ) {
        self.client = client
        self.logger = logger
        self.handle = handle
    }

    public func run() async throws {
        try await client.subscribe(Self.subscription, qos: 1)
        // On shutdown the subscription goes first (the group shares the input without us),
        // then the loop ends after the message in hand.
        try await withGracefulShutdownHandler {
            try await cancelWhenGracefulShutdown {
                for await message in client.messages where message.topic.hasPrefix("chat-in/") {
                    await handle(message.topic, message.payload, message.userProperties["parley-user"])
                }
            }
        } onGracefulShutdown: {
            try? client.unsubscribe(Self.subscription)
        }
    }
}
