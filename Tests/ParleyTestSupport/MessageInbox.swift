import Foundation
import ParleyMQTT
import Synchronization

/// Collects a client's messages from its single stream, so tests can wait for the next one
/// with a deadline. (Cancelling a wait on the stream itself would end the stream.)
public final class MessageInbox: Sendable {
    final class Buffer: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
    }

    private let buffer = Buffer()
    private static let inboxes = Mutex<[ObjectIdentifier: MessageInbox]>([:])

    /// The one inbox of `client`, created on first use.
    public static func of(_ client: MQTTClient) -> MessageInbox {
        inboxes.withLock { inboxes in
            if let inbox = inboxes[ObjectIdentifier(client)] { return inbox }
            let inbox = MessageInbox(client)
            inboxes[ObjectIdentifier(client)] = inbox
            return inbox
        }
    }

    private init(_ client: MQTTClient) {
        let buffer = self.buffer
        Task {
            for await message in client.messages { buffer.messages.withLock { $0.append(message) } }
        }
    }

    /// The next message, or nil when none arrives within `limit`.
    public func next(within limit: Duration) async -> MQTTMessage? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let message = buffer.messages.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return message }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
