import Foundation
import ParleyCore
import Testing

@testable import ParleyRedis

/// A window's backstop summary: parked until due, queued by any consumer then, or released
/// sooner by the relay with the other rooms due, as one job.
extension RedisJobQueueTests {
    @Test func parkedJobsAreReleasedTogetherAsOneJobAndLeaveNothingParked() async throws {
        let queue = try queue()
        let header = NotificationSummaryJob.marker
        let jobs = [7, 9].map { NotificationSummaryJob(room: $0).payload }
        try await queue.park(jobs, until: Date() + 60)
        // Parked again by a later batch: the same job, due later, not a second one.
        try await queue.park([jobs[0]], until: Date() + 90)
        #expect(try await queue.postponed() == 2)
        #expect(try await queue.depth() == 0)

        try await queue.release(jobs + [NotificationSummaryJob(room: 11).payload], joinedAfter: header)
        #expect(try await queue.postponed() == 0)
        let seen = Recorder()
        try await consume(
            queue, consumers: [JobConsumer(queue: queue, consumer: "c0", logger: .quiet) { seen.add($0) }],
            until: { !seen.values.isEmpty })
        // A room whose backstop was never parked (its park failed) is released all the same.
        #expect(seen.values == ["notification-summary\n7:0\n9:0\n11:0\n"])
    }

    @Test func aParkedJobNotReleasedGoesWhenDue() async throws {
        let queue = try queue()
        try await queue.park([NotificationSummaryJob(room: 5).payload], until: Date() + 0.3)
        let seen = Recorder()
        let start = ContinuousClock.now
        try await consume(
            queue, consumers: [JobConsumer(queue: queue, consumer: "c0", logger: .quiet) { seen.add($0) }],
            until: { !seen.values.isEmpty })
        #expect(seen.values == ["notification-summary\n5:0\n"])
        #expect(ContinuousClock.now - start >= .milliseconds(250))
        #expect(try await queue.postponed() == 0)
    }
}
