import Foundation
import Glibc
import ParleyRuntime
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyMQTT

/// ``MQTTClient/stopReading()`` is where a consumer stops taking messages (the ingest's
/// graceful stop): after it returns nothing more reaches the client's routes, and what the
/// client left unread stays with its kept session.
struct StopReadingTests {
    @Test func aReadUnderWayEndsBeforeStopReadingReturnsAndTheSessionKeepsTheRest() async throws {
        let services = try TestServices.shared()
        let (id, topic) = ("stop-\(UUID().uuidString.prefix(8))", "test/stop/\(UUID().uuidString)")
        var configuration = services.mqtt(clientID: id)
        configuration.sessionExpiry = .seconds(60)
        configuration.receiveMaximum = 100
        let receiver = try MQTTClient(configuration: configuration, logger: .quiet)
        let first = Received()
        let stopped = Atomic<Bool>(false)
        let afterStop = Atomic<Int>(0)
        let outlived = Atomic<Bool>(false)
        receiver.route(topicsWithPrefix: topic) { message in
            if stopped.load(ordering: .sequentiallyConsistent) { afterStop.add(1, ordering: .sequentiallyConsistent) }
            first.add(String(decoding: message.payload, as: UTF8.self))
            // The first message keeps its read under way (on the network thread) while the
            // test stops reading: the stop must wait for it.
            guard first.all.count == 1 else { return }
            usleep(300_000)
            if stopped.load(ordering: .sequentiallyConsistent) {
                outlived.store(true, ordering: .sequentiallyConsistent)
            }
        }
        try receiver.start()
        try await receiver.waitUntilConnected(timeout: .seconds(5))
        try await receiver.subscribe(topic, qos: 1)

        let publisher = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        try publisher.start()
        try await publisher.waitUntilConnected(timeout: .seconds(5))
        let sent = (0..<30).map { "\($0)" }
        try await publisher.publish(batch: sent.prefix(20).map { (topic, Array($0.utf8)) }, messageExpiry: .seconds(60))
        for _ in 0..<250 where first.all.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        try #require(!first.all.isEmpty, "nothing arrived")
        await BlockingCall.run("stop-reading") { receiver.stopReading() }
        stopped.store(true, ordering: .sequentiallyConsistent)
        try await publisher.publish(batch: sent.suffix(10).map { (topic, Array($0.utf8)) }, messageExpiry: .seconds(60))
        try await Task.sleep(for: .milliseconds(500))
        let readOutlivedTheStop = outlived.load(ordering: .sequentiallyConsistent)
        #expect(!readOutlivedTheStop, "stopReading returned while a read was under way")
        #expect(afterStop.load(ordering: .sequentiallyConsistent) == 0, "messages reached the route after the stop")
        await receiver.shutdown()

        // What the stopped client did not take, its session holds for the next connection.
        let restarted = try MQTTClient(configuration: configuration, logger: .quiet)
        let second = Received()
        restarted.route(topicsWithPrefix: topic) { second.add(String(decoding: $0.payload, as: UTF8.self)) }
        try restarted.start()
        let all = Set(sent)
        for _ in 0..<250 where Set(first.all).union(second.all) != all { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Set(first.all).union(second.all) == all, "lost: \(all.subtracting(first.all).subtracting(second.all))")
        await restarted.shutdown()
        await publisher.shutdown()
    }
}
