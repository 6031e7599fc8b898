import Foundation
import NIOCore
import ParleyKit
import ParleyRuntime
import ParleyTestSupport
import Synchronization
import Testing

struct MQTTLinkTests {
    @Test func theBackoffDoublesUpToItsCapWithAJitteredWait() {
        let backoff = MQTTBackoff(initial: .milliseconds(500), maximum: .seconds(30))
        #expect((0..<8).map { backoff.cap(attempt: $0) }.map { $0.components.seconds } == [0, 1, 2, 4, 8, 16, 30, 30])
        #expect(backoff.cap(attempt: 1_000) == .seconds(30))
        var random = SeededGenerator(seed: 52)
        let waits = (0..<200).map { _ in backoff.delay(attempt: 3, using: &random) }
        #expect(waits.allSatisfy { $0 >= .zero && $0 <= .seconds(4) })
        #expect(Set(waits).count > 150, "the waits are spread, not one value")
    }

    /// The broker restarts in the middle: the link connects again with a CONNECT asked for
    /// afresh, subscribes again (the broker kept no session), and delivers what comes after.
    @Test(arguments: MQTTVersion.allCases)
    func aBrokerRestartIsRiddenOutAndTheSubscriptionRestored(version: MQTTVersion) async throws {
        let services = try await TestServices.makePrivate()
        let endpoint = MQTTEndpoint(host: "127.0.0.1", port: services.port("MQTT"))
        let asked = Locked(0)
        let password = ByteBuffer(string: services.secret("MQTT"))
        @Sendable func connectPacket(_ clientID: String) -> MQTTPacket.Connect {
            .init(version: version, clientID: clientID, username: "parley-server", password: password)
        }
        let link = MQTTLink(
            endpoint: endpoint, backoff: .init(initial: .milliseconds(100), maximum: .milliseconds(400))
        ) {
            asked.withLock { $0 += 1 }
            return connectPacket("kit-link")
        }
        let seen = Locked<[MQTTLink.State]>([])
        let watcher = Task { for await state in link.states { seen.withLock { $0.append(state) } } }
        var checked = 0
        /// Waits (up to 20 s) for a state after those already waited past.
        func waitFor(_ wanted: (MQTTLink.State) -> Bool) async throws {
            for _ in 0..<400 {
                let states = seen.withLock { $0 }
                if let index = states.indices.dropFirst(checked).first(where: { wanted(states[$0]) }) {
                    checked = index + 1
                    return
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("no such state within 20 s; seen: \(seen.withLock { $0 })")
            throw MQTTConnectionError.closed
        }
        await link.start()
        try await waitFor { if case .connected = $0 { true } else { false } }
        let topic = "parley-kit/link/\(UUID().uuidString)"
        #expect(try await link.subscribe([.init(topicFilter: topic, qos: .atLeastOnce)]) == [1])

        try await services.stop("mosquitto")
        try await waitFor { if case .waiting = $0 { true } else { false } }
        try await services.start("mosquitto")
        try await waitFor { $0 == .connected(sessionPresent: false) }
        #expect(asked.withLock { $0 } >= 2)

        let publisher = try await MQTTConnection.connect(to: endpoint, as: connectPacket("kit-link-publisher"))
        try await publisher.publish(.init(topic: topic, payload: ByteBuffer(string: "after"), qos: .atLeastOnce))
        let delivered = try await withTimeout(.seconds(5)) {
            var iterator = link.deliveries.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(delivered?.payload == ByteBuffer(string: "after"))
        await publisher.disconnect()
        await link.stop()
        await watcher.value
        #expect(seen.withLock { $0.last } == .stopped)
        try await services.shutdown()
    }
}

/// A value shared with concurrently running closures.
private final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}
