import Foundation
import ParleyCore
import ParleyTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyRedis

struct RedisJobQueueTests {
    func queue(
        maxAttempts: Int = 3, visibility: Duration = .milliseconds(300), concurrency: Int = 1,
        holdOrderFor: Duration = .zero
    ) throws -> RedisJobQueue {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        return RedisJobQueue(
            name: "test-\(UUID().uuidString.prefix(8))", pool: pool,
            configuration: .init(
                maxAttempts: maxAttempts, visibilityTimeout: visibility, batchSize: 8, blockFor: .milliseconds(100),
                concurrency: concurrency, holdOrderFor: holdOrderFor))
    }

    /// Runs consumers until `done` holds or the time is up.
    func consume(
        _ queue: RedisJobQueue, consumers: [JobConsumer], until done: @escaping @Sendable () async -> Bool,
        within limit: Duration = .seconds(10)
    ) async throws {
        let group = ServiceGroup(configuration: .init(services: consumers.map { .init(service: $0) }, logger: .quiet))
        let running = Task { try await group.run() }
        let start = ContinuousClock.now
        while await !done() && ContinuousClock.now - start < limit { try await Task.sleep(for: .milliseconds(20)) }
        await group.triggerGracefulShutdown()
        try await running.value
    }

    @Test func aQueuesKeysShareAHashTagAndWhatAnOlderVersionQueuedIsStillHandled() async throws {
        let queue = try queue()
        #expect(
            [queue.stream, queue.deadLetterStream, queue.delayedSet].allSatisfy { $0.contains("{\(queue.name)}") })
        // Queued under the keys without the tag, before an upgrade.
        _ = try await queue.pool.send("XADD", queue.legacyKeys[0], "*", "job", "old-1")
        _ = try await queue.pool.send("XADD", queue.legacyKeys[1], "*", "job", "old-dead", "reason", "r")
        _ = try await queue.pool.send("ZADD", queue.legacyKeys[2], "1", "1|0-1|old-later")
        try await queue.enqueue("new-1")
        let seen = Recorder()
        try await consume(
            queue, consumers: [JobConsumer(queue: queue, consumer: "c0", logger: .quiet) { seen.add($0) }],
            until: { seen.values.count >= 3 })
        #expect(Set(seen.values) == ["old-1", "new-1", "old-later"])
        #expect(try await queue.deadLetters().count == 1)
        for key in queue.legacyKeys { #expect(try await queue.pool.send("EXISTS", key).integer == 0, "\(key)") }
    }

    @Test func jobsAddedTogetherAreAllQueuedInOrder() async throws {
        let queue = try queue()
        try await queue.enqueue(contentsOf: (0..<50).map { "batch-\($0)" })
        #expect(try await queue.depth() == 50)
        let seen = Recorder()
        try await consume(
            queue, consumers: [JobConsumer(queue: queue, consumer: "c0", logger: .quiet) { seen.add($0) }],
            until: { seen.values.count == 50 })
        #expect(seen.values == (0..<50).map { "batch-\($0)" })
    }

    @Test func aPipelineAnswersEachCommandInOrderWithErrorsInPlace() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let key = "test-pipeline-\(UUID().uuidString.prefix(8))"
        let results = try await pool.pipeline([
            ["SET", key, "7"], ["INCR", key], ["HGET", key, "field"], ["GET", key], ["DEL", key],
        ])
        #expect(results.count == 5)
        #expect(try results[1].get().integer == 8)
        // The wrong-type error is the third command's answer alone; the rest go on.
        #expect(throws: RedisError.self) { try results[2].get() }
        #expect(try results[3].get().string == "8")
        #expect(try results[4].get().integer == 1)
        // The connection is still good for the next caller.
        #expect(try await pool.send("PING").string == "PONG")
    }

    @Test func housekeepingIsDueFirstAndThenOncePerInterval() {
        var housekeeping = Housekeeping(interval: .seconds(1))
        let start = ContinuousClock.now
        let answers = [0, 500, 1001, 1500].map { housekeeping.isDue(now: start + .milliseconds($0)) }
        #expect(answers == [true, false, true, false])
    }

    @Test func everyJobIsHandledAndAcknowledged() async throws {
        let queue = try queue()
        for index in 0..<20 { try await queue.enqueue("job-\(index)") }
        let seen = Recorder()
        let consumers = (0..<2).map { index in
            JobConsumer(queue: queue, consumer: "c\(index)", logger: .quiet) { seen.add($0) }
        }
        try await consume(queue, consumers: consumers) { seen.values.count >= 20 }
        #expect(Set(seen.values) == Set((0..<20).map { "job-\($0)" }))
        #expect(try await queue.depth() == 0)
    }

    @Test func aFailingJobIsRetriedWithBackoffThenDeadLettered() async throws {
        let queue = try queue(maxAttempts: 3, visibility: .milliseconds(200))
        try await queue.enqueue("poison")
        try await queue.enqueue("flaky")
        let attempts = Recorder()
        struct Failure: Error {}
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { job in
            attempts.add(job)
            if job == "poison" { throw Failure() }
            if job == "flaky" && attempts.values.filter({ $0 == "flaky" }).count < 2 { throw Failure() }
        }
        let start = ContinuousClock.now
        try await consume(queue, consumers: [consumer]) {
            let letters = (try? await queue.deadLetters()) ?? []
            return letters.count == 1 && attempts.values.filter { $0 == "flaky" }.count == 2
        }
        #expect(attempts.values.filter { $0 == "poison" }.count == 3)
        #expect(attempts.values.filter { $0 == "flaky" }.count == 2)
        // Retries waited 200 ms, then 400 ms.
        #expect(ContinuousClock.now - start >= .milliseconds(600))
        #expect(try await queue.deadLetters() == ["poison"])
        #expect(try await queue.depth() == 0)
    }

    /// A serial queue that holds its order: a job that fails for a moment is tried again in
    /// place, and the jobs after it wait (the webhooks' queue through a PostgreSQL restart).
    @Test func aFailedJobOfAQueueHoldingItsOrderIsTriedInPlaceAndTheJobsAfterItWait() async throws {
        let queue = try queue(visibility: .seconds(3), holdOrderFor: .seconds(2))
        for job in ["a", "b", "c"] { try await queue.enqueue(job) }
        let calls = Recorder()
        let handled = Recorder()
        struct Failure: Error {}
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { job in
            calls.add(job)
            if job == "a" && calls.values.filter({ $0 == "a" }).count <= 3 { throw Failure() }
            handled.add(job)
        }
        try await consume(queue, consumers: [consumer]) { handled.values.count == 3 }
        #expect(handled.values == ["a", "b", "c"], "the jobs after a failed one overtook it")
        #expect(calls.values.filter { $0 == "a" }.count == 4)
        #expect(try await queue.depth() == 0)
    }

    /// An outage (PostgreSQL down for longer than the visibility timeout) holds the order for
    /// as long as it lasts: the failing job keeps its place and its claim, and no other
    /// consumer takes it meanwhile.
    @Test func aJobFailingForAnOutageKeepsItsPlaceAndItsClaimPastTheHold() async throws {
        let queue = try queue(visibility: .milliseconds(600), holdOrderFor: .milliseconds(400))
        for job in ["a", "b", "c"] { try await queue.enqueue(job) }
        let handled = Recorder()
        let triedBy = Recorder()
        let outageEnds = ContinuousClock.now + .milliseconds(1800)
        struct Outage: DependencyError { var isUnavailability: Bool { true } }
        // Two consumers: the first to read takes the three jobs, the other finds none new.
        let consumers = ["first", "second"].map { name in
            JobConsumer(queue: queue, consumer: name, logger: .quiet) { job in
                if job == "a" {
                    triedBy.add(name)
                    if ContinuousClock.now < outageEnds { throw Outage() }
                }
                handled.add(job)
            }
        }
        try await consume(queue, consumers: consumers) { handled.values.count == 3 }
        #expect(handled.values == ["a", "b", "c"], "the jobs after the held one overtook it")
        #expect(Set(triedBy.values).count == 1, "another consumer claimed the held job")
        #expect(triedBy.values.count >= 4)
        #expect(try await queue.depth() == 0)
    }

    /// Past its hold (two thirds of the visibility timeout at most), a failing job is given
    /// back and the queue's retries take over: the jobs after it go on, it is dead-lettered
    /// after its deliveries.
    @Test func aJobFailingPastTheHoldIsGivenBackAndTheJobsAfterItGoOn() async throws {
        let queue = try queue(maxAttempts: 2, visibility: .milliseconds(600), holdOrderFor: .seconds(10))
        #expect(queue.configuration.holdOrderFor == .milliseconds(400))
        for job in ["poison", "next"] { try await queue.enqueue(job) }
        let calls = Recorder()
        struct Failure: Error {}
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { job in
            calls.add(job)
            if job == "poison" { throw Failure() }
        }
        try await consume(queue, consumers: [consumer]) { ((try? await queue.deadLetters()) ?? []).count == 1 }
        #expect(calls.values.contains("next"))
        #expect(try await queue.deadLetters() == ["poison"])
        // Each of its two deliveries was tried more than once in place.
        #expect(calls.values.filter { $0 == "poison" }.count >= 4)
    }

    @Test func jobsOfADeadConsumerAreReclaimed() async throws {
        let queue = try queue(visibility: .milliseconds(300))
        for index in 0..<5 { try await queue.enqueue("j\(index)") }
        // A consumer takes the jobs and dies before acknowledging them.
        let crashing = Recorder()
        struct Crash: Error {}
        try await consume(
            queue,
            consumers: [
                JobConsumer(queue: queue, consumer: "dies", logger: .quiet) { job in
                    crashing.add(job)
                    throw Crash()
                }
            ]
        ) { crashing.values.count >= 5 }
        let survivor = Recorder()
        try await consume(
            queue, consumers: [JobConsumer(queue: queue, consumer: "lives", logger: .quiet) { survivor.add($0) }]
        ) { Set(survivor.values).count >= 5 }
        #expect(Set(survivor.values) == Set((0..<5).map { "j\($0)" }))
        #expect(try await queue.depth() == 0)
    }
}

extension RedisJobQueueTests {
    @Test func oneHousekeepingRoundPromotesDueJobsCountsTheStreamAndClaimsAbandonedOnes() async throws {
        let queue = try queue(visibility: .milliseconds(100))
        try await queue.ensureGroup()
        try await queue.enqueue("abandoned")
        // Read by a consumer that dies before acknowledging it.
        #expect(try await queue.readNew(for: "dies", count: 1, block: .milliseconds(100)).count == 1)
        try await queue.postpone("later", attempts: 1, after: .zero, entryID: "0-1")
        // Past the visibility timeout, the first delivery's back-off.
        try await Task.sleep(for: .milliseconds(250))
        let round = try await queue.housekeep(for: "lives", limit: 8, excluding: [])
        #expect((try? round.promoted.get()) != nil)
        #expect(round.depth == 2, "the abandoned job and the promoted one")
        #expect(round.claimed.map { $0.entry.fields["job"] } == ["abandoned"])
        #expect(round.claimed.first?.deliveries == 2)
        #expect(try await queue.postponed() == 0)
        // A job this consumer still runs is not claimed, even when abandoned long enough.
        try await Task.sleep(for: .milliseconds(250))
        let id = try #require(round.claimed.first?.entry.id)
        #expect(try await queue.housekeep(for: "other", limit: 8, excluding: [id]).claimed.isEmpty)
        // Finished: out of the stream and the pending list.
        try await queue.finish(id)
        #expect(try await queue.depth() == 1)
        #expect(try await queue.pool.send("XPENDING", queue.stream, RedisJobQueue.group).array?.first?.integer == 0)
    }

    @Test func aRoundClaimsADueJobBehindAPageOfJobsStillInTheirBackOff() async throws {
        let queue = try queue(visibility: .milliseconds(100))
        try await queue.ensureGroup()
        for index in 0..<9 { try await queue.enqueue("j\(index)") }
        let read = try await queue.readNew(for: "dies", count: 9, block: .milliseconds(100))
        #expect(read.count == 9)
        // The first page's eight (the queue's batch size) tried ten times: backing off for long.
        for delivery in read.prefix(8) {
            _ = try await queue.pool.send(
                "XCLAIM", queue.stream, RedisJobQueue.group, "dies", "0", delivery.entry.id, "RETRYCOUNT", "10",
                "JUSTID")
        }
        try await Task.sleep(for: .milliseconds(250))
        let round = try await queue.housekeep(for: "lives", limit: 8, excluding: [])
        #expect(round.claimed.map { $0.entry.fields["job"] } == ["j8"])
    }

    @Test func aPostponedJobWaitsForItsDelayAndKeepsItsAttempts() async throws {
        let queue = try queue(maxAttempts: 3, visibility: .seconds(30))
        try await queue.enqueue("throttled")
        try await queue.enqueue("always-throttled")
        let attempts = Mutex<[String: [ContinuousClock.Instant]]>([:])
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { job in
            let count = attempts.withLock { seen in
                seen[job, default: []].append(.now)
                return seen[job]!.count
            }
            if job == "always-throttled" || count == 1 { throw RetryLater(after: .milliseconds(700), reason: "429") }
        }
        try await consume(queue, consumers: [consumer]) {
            let letters = (try? await queue.deadLetters()) ?? []
            return letters == ["always-throttled"] && attempts.withLock { $0["throttled"]?.count == 2 }
        }
        let seen = attempts.withLock { $0 }
        let throttled = try #require(seen["throttled"])
        #expect(throttled.count == 2)
        if throttled.count == 2 {
            // Far sooner than the 30 s visibility back-off, and not before the delay asked for.
            let waited = throttled[0].duration(to: throttled[1])
            #expect(waited >= .milliseconds(700) && waited < .seconds(10), "\(waited)")
        }
        // The attempts made before each postponement count towards the limit.
        #expect(seen["always-throttled"]?.count == 3)
        #expect(try await queue.deadLetters() == ["always-throttled"])
        #expect(try await queue.postponed() == 0)
        #expect(try await queue.depth() == 0)
    }

    @Test func aSlowJobHoldsOneSlotNotTheOthers() async throws {
        let queue = try queue(concurrency: 3)
        try await queue.enqueue("slow")
        for index in 0..<10 { try await queue.enqueue("fast-\(index)") }
        let finished = Recorder()
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { job in
            if job == "slow" {
                // Ends only once every fast job is done: possible only if the other slots keep
                // taking jobs while this one runs (it outlives the visibility timeout, too).
                let start = ContinuousClock.now
                while finished.values.count < 10 && start.duration(to: .now) < .seconds(30) {
                    try await Task.sleep(for: .milliseconds(20))
                }
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
            finished.add(job)
        }
        try await consume(queue, consumers: [consumer], until: { finished.values.count >= 11 }, within: .seconds(40))
        #expect(finished.values.count == 11, "\(finished.values)")
        #expect(finished.values.last == "slow")
        #expect(Set(finished.values.dropLast()) == Set((0..<10).map { "fast-\($0)" }))
    }

    @Test func aConcurrentConsumerRunsHandlersSideBySide() async throws {
        let queue = try queue(concurrency: 4)
        for index in 0..<8 { try await queue.enqueue("j\(index)") }
        let running = Mutex((now: 0, most: 0, done: 0))
        let consumer = JobConsumer(queue: queue, consumer: "c", logger: .quiet) { _ in
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            // Each handler waits (boundedly) for company: four at once can only happen if the
            // consumer runs four side by side; a slow machine does not change the outcome.
            let start = ContinuousClock.now
            while running.withLock({ $0.most }) < 4 && start.duration(to: .now) < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(20))
            running.withLock {
                $0.now -= 1
                $0.done += 1
            }
        }
        try await consume(
            queue, consumers: [consumer], until: { running.withLock { $0.done } == 8 }, within: .seconds(30))
        #expect(running.withLock { $0.most } == 4)
        #expect(try await queue.depth() == 0)
    }
}

/// Thread-safe list of what handlers saw.
final class Recorder: Sendable {
    private let items = Mutex<[String]>([])
    func add(_ item: String) { items.withLock { $0.append(item) } }
    var values: [String] { items.withLock { $0 } }
}
