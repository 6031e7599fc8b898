import ParleyCore

extension MQTTClient: EventPublisher {
    /// Server events: QoS 1 with MQTT 5 message expiry of one hour (the source's offline
    /// expiry); anything older is in the history over REST.
    static let eventExpiry = Duration.seconds(3600)

    public func publish(topic: String, payload: String) async throws {
        try await publish(topic: topic, payload: Array(payload.utf8), qos: 1, messageExpiry: Self.eventExpiry)
    }

    public func publish(events: [(topic: String, payload: String)]) async throws {
        try await publish(batch: events.map { ($0.topic, Array($0.payload.utf8)) }, messageExpiry: Self.eventExpiry)
    }

    public func publishTransient(topic: String, payload: String) async throws {
        try await publish(topic: topic, payload: Array(payload.utf8), qos: 0)
    }
}
