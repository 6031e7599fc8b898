import Synchronization

/// Holds back everything a client sends, its acknowledgements (PUBACK) of received messages
/// first, while a message it received is not yet settled by its receiver.
///
/// libmosquitto acknowledges a QoS 1 delivery as it reads it, before the message reaches
/// Parley, and has no manual acknowledgement. It only queues that PUBACK, though: the client's
/// network loop decides when queued packets are written. A receiver that must not lose what
/// the broker handed it (the ingest, which stores `chat-in`) ``hold()``s each message as it
/// arrives and ``settle(_:)``s it once stored or refused; the loop writes only while nothing
/// is held. A process killed in between has acknowledged nothing it held, and the broker
/// hands those messages to the kept session again. See the *Chat-in through a worker restart*
/// article.
public final class AcknowledgementGate: Sendable {
    private let held = Atomic<Int>(0)
    /// Wakes the network loop when the last held message is settled.
    private let opened: @Sendable () -> Void

    init(opened: @escaping @Sendable () -> Void) { self.opened = opened }

    /// Whether the client may write now: nothing it received is still held.
    public var isOpen: Bool { held.load(ordering: .acquiring) == 0 }

    /// Holds one received message. Call it on the network thread, in the route that takes
    /// the message, so the hold comes before the loop next decides whether to write.
    public func hold() { held.add(1, ordering: .sequentiallyConsistent) }

    /// Settles `count` held messages (stored, or answered with a refusal).
    public func settle(_ count: Int) {
        guard count > 0 else { return }
        let remaining = held.subtract(count, ordering: .sequentiallyConsistent).newValue
        precondition(remaining >= 0, "more messages settled than were held")
        if remaining == 0 { opened() }
    }
}
