/// What the client tracks between libmosquitto's thread and Swift callers.
struct MQTTClientState {
    var started = false
    var shutDown = false
    var connected = false
    /// The broker's reason for refusing the last CONNECT, if it did.
    var refusal: Int32?
    /// Filters to (re)subscribe on every connect, with their QoS.
    var subscriptions: [String: Int32] = [:]
    /// Handlers that take messages by topic prefix on the network thread, instead of ``MQTTClient/messages``.
    var routes: [(prefix: String, handler: @Sendable (MQTTMessage) -> Void)] = []
    /// Called when the connection is lost (``MQTTClient/onConnectionLost(_:)``).
    var connectionLost: [@Sendable () -> Void] = []
    /// The caller waiting for the PUBACK or SUBACK of each message id.
    var pending: [Int32: AcknowledgementWaiter] = [:]
    /// Publishes whose PUBACK 0x10 (no subscriber matched) is a failure.
    var needsSubscriber: Set<Int32> = []
    /// Acknowledgements that arrived before their caller started waiting, with the broker's
    /// verdict. Entries older than a few seconds are stale and ignored: message ids wrap.
    var earlyAcknowledgements: [Int32: (at: ContinuousClock.Instant, error: MQTTError?)] = [:]
    /// Message ids whose acknowledgement nobody will wait for (QoS 0, re-subscriptions,
    /// timed-out calls): dropped when they arrive.
    var ignored: Set<Int32> = []

    /// Nobody waits for `mid`: forget an early acknowledgement or drop the future one.
    mutating func ignore(_ mid: Int32) {
        if earlyAcknowledgements.removeValue(forKey: mid) == nil { ignored.insert(mid) }
    }

    /// Ends `waiter`'s wait: its ids not yet acknowledged are dropped when they arrive.
    /// Returns its continuation, once.
    mutating func finish(_ waiter: AcknowledgementWaiter) -> CheckedContinuation<Void, any Error>? {
        for mid in waiter.mids where pending[mid] === waiter {
            pending.removeValue(forKey: mid)
            ignored.insert(mid)
        }
        waiter.finished = true
        defer { waiter.continuation = nil }
        return waiter.continuation
    }
}

/// One call waiting for the acknowledgements of its message ids (one, or a batch's): one
/// continuation and one deadline for all of them, rather than one of each per message.
///
/// Read and changed only under the client's state lock.
final class AcknowledgementWaiter: @unchecked Sendable {
    let mids: [Int32]
    /// Ids still to be acknowledged.
    var remaining = 0
    var continuation: CheckedContinuation<Void, any Error>?
    /// Ended (acknowledged, refused, timed out or closed) before or while it waited.
    var finished = false
    var outcome: MQTTError?

    init(mids: [Int32]) {
        self.mids = mids
    }
}
