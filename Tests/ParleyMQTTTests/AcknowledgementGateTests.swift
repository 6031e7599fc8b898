import Foundation
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyMQTT

/// A client's acknowledgements wait for its receiver (``AcknowledgementGate``): what the
/// receiver still holds when the process ends is the broker's to deliver again.
struct AcknowledgementGateTests {
    /// A receiver on a kept session that takes every message of `topic` into `received`,
    /// holding each one when `holding`.
    func receiver(
        _ services: TestServices, id: String, topic: String, holding: Bool, received: Received
    ) async throws -> MQTTClient {
        var configuration = services.mqtt(clientID: id)
        configuration.sessionExpiry = .seconds(60)
        configuration.receiveMaximum = 100
        configuration.acknowledgementTimeout = .seconds(5)
        let client = try MQTTClient(configuration: configuration, logger: .quiet)
        client.route(topicsWithPrefix: topic) { [gate = client.acknowledgementGate] message in
            if holding { gate.hold() }
            received.add(String(decoding: message.payload, as: UTF8.self))
        }
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        try await client.subscribe(topic, qos: 1)
        return client
    }

    func publisher(_ services: TestServices) async throws -> MQTTClient {
        let client = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        return client
    }

    @Test func aMessageHeldWhenTheClientEndsIsDeliveredToItsSessionAgain() async throws {
        let services = try TestServices.shared()
        let (id, topic) = ("gate-\(UUID().uuidString.prefix(8))", "test/gate/\(UUID().uuidString)")
        let first = Received()
        let holder = try await receiver(services, id: id, topic: topic, holding: true, received: first)
        let publisher = try await publisher(services)
        try await publisher.publish(topic: topic, payload: Array("held".utf8), qos: 1, messageExpiry: .seconds(60))
        #expect(await first.wait(for: ["held"]))
        await holder.shutdown()

        let second = Received()
        let restarted = try await receiver(services, id: id, topic: topic, holding: false, received: second)
        #expect(await second.wait(for: ["held"]), "the broker took the held message as acknowledged")
        await restarted.shutdown()
        await publisher.shutdown()
    }

    @Test func aSettledMessageIsAcknowledgedAndTheHeldWritesGoOut() async throws {
        let services = try TestServices.shared()
        let (id, topic) = ("gate-\(UUID().uuidString.prefix(8))", "test/gate/\(UUID().uuidString)")
        let first = Received()
        let holder = try await receiver(services, id: id, topic: topic, holding: true, received: first)
        let publisher = try await publisher(services)
        try await publisher.publish(topic: topic, payload: Array("settled".utf8), qos: 1, messageExpiry: .seconds(60))
        #expect(await first.wait(for: ["settled"]))

        // The holder's own publish waits behind the held acknowledgement, then goes at once.
        let own = Task {
            try await holder.publish(topic: "test/gate/own", payload: Array("x".utf8), qos: 1)
            return ContinuousClock.now
        }
        try await Task.sleep(for: .milliseconds(500))
        let settledAt = ContinuousClock.now
        holder.acknowledgementGate.settle(1)
        let sentAt = try await own.value
        #expect(sentAt > settledAt, "a write went out while a message was held")
        #expect(sentAt - settledAt < .milliseconds(500), "the settled gate did not wake the loop")
        await holder.shutdown()

        let second = Received()
        let restarted = try await receiver(services, id: id, topic: topic, holding: false, received: second)
        try await publisher.publish(topic: topic, payload: Array("after".utf8), qos: 1, messageExpiry: .seconds(60))
        #expect(await second.wait(for: ["after"]))
        #expect(second.all == ["after"], "a settled message was delivered again")
        await restarted.shutdown()
        await publisher.shutdown()
    }

    /// Under steady input something is always held; the client pauses reading until all of it
    /// is settled, so its writes (and its keep-alive) still go out, and nothing is lost.
    @Test func underSteadyInputTheClientPausesReadingSoItsWritesGoOut() async throws {
        let services = try TestServices.shared()
        let topic = "test/gate/\(UUID().uuidString)"
        var configuration = services.mqtt(clientID: "gate-\(UUID().uuidString.prefix(8))")
        configuration.receiveMaximum = 1_000
        configuration.acknowledgementTimeout = .seconds(5)
        configuration.readPauseAfterHolding = .milliseconds(300)
        let holder = try MQTTClient(configuration: configuration, logger: .quiet)
        // Each message is settled 50 ms after it came: never all at once while input flows.
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        let count = Atomic<Int>(0)
        holder.route(topicsWithPrefix: topic) { [gate = holder.acknowledgementGate] _ in
            gate.hold()
            arrivals.withLock { $0.append(.now) }
            count.add(1, ordering: .relaxed)
        }
        try holder.start()
        try await holder.waitUntilConnected(timeout: .seconds(5))
        try await holder.subscribe(topic, qos: 1)
        let settler = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(10))
                let due = arrivals.withLock { held in
                    let due = held.prefix { ContinuousClock.now - $0 > .milliseconds(50) }.count
                    held.removeFirst(due)
                    return due
                }
                holder.acknowledgementGate.settle(due)
            }
        }
        let publisher = try await publisher(services)
        let input = Task {
            for index in 0..<300 {
                try await publisher.publish(topic: topic, payload: Array("\(index)".utf8), qos: 1)
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let started = ContinuousClock.now
        try await holder.publish(topic: "test/gate/own", payload: Array("x".utf8), qos: 1)
        #expect(ContinuousClock.now - started < .seconds(2), "the holder's writes waited for the input to end")
        try await input.value
        for _ in 0..<250 where count.load(ordering: .relaxed) < 300 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(count.load(ordering: .relaxed) == 300, "a message was lost while the client paused")
        settler.cancel()
        await holder.shutdown()
        await publisher.shutdown()
    }
}

/// Payloads a receiver got, in order.
final class Received: Sendable {
    private let payloads = Mutex<[String]>([])

    func add(_ payload: String) { payloads.withLock { $0.append(payload) } }

    var all: [String] { payloads.withLock { $0 } }

    /// Whether `expected` arrived within 5 s.
    func wait(for expected: [String]) async -> Bool {
        for _ in 0..<250 where all != expected { try? await Task.sleep(for: .milliseconds(20)) }
        return all == expected
    }
}
