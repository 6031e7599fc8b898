import Dispatch
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
///
/// libmosquitto writes its queue in order, so the loop cannot send the PUBACKs of settled
/// messages alone: under steady input something is always held, and nothing would go out
/// (acknowledgements, the keep-alive's PINGREQ, the ingest's progress report) until the
/// broker ended the silent connection. So once the gate has been shut for `readPauseAfter`,
/// the client stops reading (``pausesReading``) until what it holds is settled.
public final class AcknowledgementGate: Sendable {
    private let held = Atomic<Int>(0)
    /// When `held` last rose from zero (`DispatchTime` nanoseconds).
    private let shutSince = Atomic<UInt64>(0)
    private let readPauseAfter: UInt64
    /// Wakes the network loop when the last held message is settled.
    private let opened: @Sendable () -> Void

    init(readPauseAfter: Duration, opened: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = readPauseAfter.components
        self.readPauseAfter = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
        self.opened = opened
    }

    /// Whether the client may write now: nothing it received is still held.
    public var isOpen: Bool { held.load(ordering: .acquiring) == 0 }

    /// Whether the client should read nothing more until the gate opens: it has been shut for
    /// `readPauseAfter`.
    var pausesReading: Bool {
        guard !isOpen else { return false }
        let since = shutSince.load(ordering: .acquiring)
        return DispatchTime.now().uptimeNanoseconds &- since >= readPauseAfter
    }

    /// Holds one received message. Call it on the network thread, in the route that takes
    /// the message, so the hold comes before the loop next decides whether to write.
    public func hold() {
        if held.add(1, ordering: .sequentiallyConsistent).oldValue == 0 {
            shutSince.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
        }
    }

    /// Settles `count` held messages (stored, or answered with a refusal).
    public func settle(_ count: Int) {
        guard count > 0 else { return }
        let remaining = held.subtract(count, ordering: .sequentiallyConsistent).newValue
        precondition(remaining >= 0, "more messages settled than were held")
        if remaining == 0 { opened() }
    }
}
