/// What the client tracks between libmosquitto's thread and Swift callers.
struct MQTTClientState {
    var started = false
    var shutDown = false
    var connected = false
    /// Filters to (re)subscribe on every connect, with their QoS.
    var subscriptions: [String: Int32] = [:]
    /// Callers waiting for the PUBACK or SUBACK of a message id.
    var pending: [Int32: CheckedContinuation<Void, any Error>] = [:]
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
}
