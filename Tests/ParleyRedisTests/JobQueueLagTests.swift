import Foundation
import ParleyCore
import ParleyTestSupport
import ServiceLifecycle
import Testing

@testable import ParleyRedis

/// A queue's readiness: up while consumers keep up, down when a job waits unread past the
/// visibility timeout or a read job goes unclaimed past its own, up again once it is handled.
struct JobQueueLagTests {
    func queue() throws -> RedisJobQueue {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        return RedisJobQueue(
            name: "lag-\(UUID().uuidString.prefix(8))", pool: pool,
            configuration: .init(visibilityTimeout: .milliseconds(500), batchSize: 8, blockFor: .milliseconds(100)))
    }

    @Test func anEmptyQueueIsReady() async throws {
        let queue = try queue()
        #expect(try await queue.lag() == JobQueueLag(oldestWaiting: .zero, oldestOverdue: .zero))
        try await JobQueueProbe(queue: queue).probe()
    }

    @Test func aJobNobodyReadsMakesTheQueueUnreadyUntilItIsHandled() async throws {
        let queue = try queue()
        try await queue.ensureGroup()
        try await queue.enqueue("waiting")
        let probe = JobQueueProbe(queue: queue)
        #expect(probe.name == "\(queue.name)-queue")
        try await probe.probe()
        try await Task.sleep(for: .milliseconds(700))
        #expect(try await queue.lag().oldestWaiting >= .milliseconds(500))
        await #expect(throws: JobQueueProbe.Stalled.self) { try await probe.probe() }

        let consumer = JobConsumer(queue: queue, consumer: "c0", logger: .quiet) { _ in }
        let group = ServiceGroup(configuration: .init(services: [.init(service: consumer)], logger: .quiet))
        let running = Task { try await group.run() }
        var handled = false
        for _ in 0..<100 where !handled {
            try await Task.sleep(for: .milliseconds(50))
            handled = try await queue.depth() == 0
        }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(handled)
        try await probe.probe()
    }

    @Test func aReadJobLeftUnclaimedPastItsTimeoutMakesTheQueueUnready() async throws {
        let queue = try queue()
        try await queue.ensureGroup()
        try await queue.enqueue("taken")
        // A consumer reads it and dies: the job is pending, and no other consumer runs.
        _ = try await queue.pool.send(
            "XREADGROUP", "GROUP", RedisJobQueue.group, "dead", "COUNT", "1", "STREAMS", queue.stream, ">")
        let probe = JobQueueProbe(queue: queue)
        try await probe.probe()
        try await Task.sleep(for: .milliseconds(1200))
        let lag = try await queue.lag()
        #expect(lag.oldestWaiting == .zero)
        #expect(lag.oldestOverdue >= .milliseconds(500))
        await #expect(throws: JobQueueProbe.Stalled.self) { try await probe.probe() }
    }
}
