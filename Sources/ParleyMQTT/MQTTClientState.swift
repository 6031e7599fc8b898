/// What the client tracks between libmosquitto's thread and Swift callers.
struct MQTTClientState {
    var started = false
    var shutDown = false
    var connected = false
    /// Filters to (re)subscribe on every connect, with their QoS.
    var subscriptions: [String: Int32] = [:]
    /// Callers waiting for the PUBACK or SUBACK of a message id.
    var pending: [Int32: CheckedContinuation<Void, any Error>] = [:]
    /// Acknowledgements that arrived before their caller started waiting.
    var earlyAcknowledgements: Set<Int32> = []
}
