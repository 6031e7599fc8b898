import Foundation
import ParleyCore

/// The relay's publisher on EMQX: events go to the broker as before, and the commands Parley
/// writes for its plugin (`$CONTROL/parley-auth/v1`, which EMQX would take for a plain topic)
/// are applied through the management API instead, in their place in the batch's order.
public struct EMQXControlPublisher: EventPublisher {
    let events: any EventPublisher
    let control: EMQXBrokerControl

    public init(publishing events: any EventPublisher, control: EMQXBrokerControl) {
        self.events = events
        self.control = control
    }

    public func publish(topic: String, payload: String) async throws {
        try await publish(events: [(topic, payload)])
    }

    public func publishTransient(topic: String, payload: String) async throws {
        try await events.publishTransient(topic: topic, payload: payload)
    }

    public func publish(events batch: [(topic: String, payload: String)]) async throws {
        var pending: [(topic: String, payload: String)] = []
        for event in batch {
            guard event.topic == BrokerControl.topic else {
                pending.append(event)
                continue
            }
            if !pending.isEmpty { try await events.publish(events: pending) }
            pending = []
            guard let command = try? JSONDecoder().decode(BrokerControl.self, from: Data(event.payload.utf8)) else {
                continue
            }
            try await control.apply(command)
        }
        if !pending.isEmpty { try await events.publish(events: pending) }
    }
}
