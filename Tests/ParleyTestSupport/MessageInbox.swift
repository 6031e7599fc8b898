import Foundation
import ParleyMQTT
import Synchronization

/// Collects a client's messages from its single stream, so tests can wait for the next one
/// with a deadline. (Cancelling a wait on the stream itself would end the stream.)
public final class MessageInbox: Sendable {
    final class Buffer: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
    }

    /// An inbox and the client it reads, held weakly: a later client may be allocated at a
    /// freed one's address, and must not be handed that client's finished inbox.
    struct Entry {
        weak var client: MQTTClient?
        let inbox: MessageInbox
    }

    private let buffer = Buffer()
    private static let inboxes = Mutex<[ObjectIdentifier: Entry]>([:])

    /// The one inbox of `client`, created on first use.
    public static func of(_ client: MQTTClient) -> MessageInbox {
        inboxes.withLock { inboxes in
            if let entry = inboxes[ObjectIdentifier(client)], entry.client === client { return entry.inbox }
            let inbox = MessageInbox(client)
            inboxes[ObjectIdentifier(client)] = Entry(client: client, inbox: inbox)
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
