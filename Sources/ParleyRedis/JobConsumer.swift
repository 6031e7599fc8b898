import Foundation
import Logging
import Metrics
import ParleyCore
import ServiceLifecycle
import Synchronization

/// Takes jobs from a ``RedisJobQueue`` and runs a handler on each, until graceful shutdown.
public struct JobConsumer: Service {
    let queue: RedisJobQueue
    let consumer: String
    let handler: @Sendable (String) async throws -> Void
    let logger: Logger
    let succeeded: Counter
    let failed: Counter
    let dead: Counter
    let depth: Gauge

    /// - Parameter consumer: unique per process (a dead process's jobs are claimed by others).
    public init(
        queue: RedisJobQueue, consumer: String, logger: Logger,
        handler: @escaping @Sendable (String) async throws -> Void
    ) {
        self.queue = queue
        self.consumer = consumer
        self.handler = handler
        self.logger = logger
        let dimensions = [("queue", queue.name)]
        succeeded = Counter(label: "parley_jobs_total", dimensions: dimensions + [("outcome", "succeeded")])
        failed = Counter(label: "parley_jobs_total", dimensions: dimensions + [("outcome", "failed")])
        dead = Counter(label: "parley_jobs_total", dimensions: dimensions + [("outcome", "dead")])
        depth = Gauge(label: "parley_queue_depth", dimensions: dimensions)
    }

    public func run() async throws {
        guard await groupCreated() else { return }
        let limit = queue.configuration.concurrency
        let jobs = RunningJobs()
        let freed = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Read for this consumer, not started yet: a serial consumer reads a batch and runs it
        // in turn; a concurrent one reads only what fills its free slots.
        var backlog: [RedisJobQueue.Delivery] = []
        var started = 0
        var backoff = Duration.milliseconds(100)
        var housekeeping = Housekeeping(interval: housekeepingInterval)
        await withDiscardingTaskGroup { group in
            var slots = freed.stream.makeAsyncIterator()
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let running = started - jobs.count
                if running >= limit {
                    _ = await slots.next()
                    continue
                }
                if backlog.isEmpty {
                    do {
                        backlog = try await next(
                            upTo: limit == 1 ? queue.configuration.batchSize : limit - running,
                            running: jobs, idle: running == 0, housekeeping: &housekeeping)
                        backoff = .milliseconds(100)
                    } catch {
                        await pause(after: error, backoff: &backoff)
                        continue
                    }
                }
                for item in backlog.prefix(limit - running) {
                    started += 1
                    jobs.start(item.entry.id)
                    group.addTask {
                        await process(item.entry, deliveries: item.deliveries, readAt: item.readAt)
                        jobs.end(item.entry.id)
                        freed.continuation.yield()
                    }
                }
                backlog.removeFirst(min(backlog.count, limit - running))
            }
            // Graceful shutdown lets the running jobs finish, and the ones already read.
            for item in backlog { await process(item.entry, deliveries: item.deliveries, readAt: item.readAt) }
        }
    }

    /// Redis may be down or still loading its data: waits for it rather than stop the worker.
    /// False when the process shuts down first.
    private func groupCreated() async -> Bool {
        var backoff = Duration.milliseconds(100)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await queue.ensureGroup()
                return true
            } catch {
                await pause(after: error, backoff: &backoff)
            }
        }
        return false
    }

    /// Up to `count` jobs to run: when housekeeping is due, postponed jobs promoted and
    /// abandoned ones claimed (never one this consumer still runs, however long it takes);
    /// then new ones, waiting for them only when nothing runs (otherwise it looks again soon).
    private func next(
        upTo count: Int, running: RunningJobs, idle: Bool, housekeeping: inout Housekeeping
    ) async throws -> [RedisJobQueue.Delivery] {
        var items: [RedisJobQueue.Delivery] = []
        if housekeeping.isDue() {
            let round = try await queue.housekeep(for: consumer, limit: count, excluding: running.running)
            if case .failure(let error) = round.promoted {
                logger.warning(
                    "postponed jobs not promoted", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
            }
            // Before reading new jobs, which stay in the stream (and its depth) until they finish.
            depth.record(round.depth)
            items = round.claimed
        }
        if items.count < count {
            let block = idle && items.isEmpty ? queue.configuration.blockFor : .milliseconds(50)
            items += try await queue.readNew(for: consumer, count: count - items.count, block: block)
        }
        return items
    }

    /// How often postponed jobs are promoted, abandoned ones claimed and the depth recorded:
    /// once a second (or per visibility timeout, if shorter), not on every read, which at a
    /// job per read would double the round trips to Redis.
    var housekeepingInterval: Duration { min(.seconds(1), queue.configuration.visibilityTimeout) }

    private func pause(after error: any Error, backoff: inout Duration) async {
        logger.warning("job queue unavailable; retrying", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        try? await Task.sleep(for: backoff)
        backoff = min(backoff * 2, .seconds(5))
    }

    /// - Parameters:
    ///   - deliveries: deliveries of this stream entry; a postponed job also counts the
    ///     attempts made before it was postponed.
    ///   - readAt: when it was read, from which the queue's ``RedisJobQueue/Configuration/holdOrderFor`` counts.
    func process(_ entry: RedisJobQueue.Entry, deliveries: Int, readAt: ContinuousClock.Instant = .now) async {
        guard let job = entry.fields["job"] else {
            await finish(entry.id)
            return
        }
        let deliveries = deliveries + (entry.fields["attempts"].flatMap { Int($0) } ?? 0)
        if deliveries > queue.configuration.maxAttempts {
            await bury(entry.id, job: job, reason: "gave up after \(deliveries - 1) attempts")
            return
        }
        do {
            try await handleHoldingOrder(job, id: entry.id, until: readAt + queue.configuration.holdOrderFor)
            await finish(entry.id)
            succeeded.increment()
        } catch let retry as RetryLater where deliveries < queue.configuration.maxAttempts {
            failed.increment()
            // A provider's Retry-After is honoured as given (the senders bound it); else the back-off.
            let delay = retry.after ?? queue.backoff(afterDeliveries: deliveries)
            logger.notice(
                "job postponed",
                metadata: [
                    "queue": "\(queue.name)", "id": "\(entry.id)", "attempt": "\(deliveries)", "delay": "\(delay)",
                    "reason": "\(retry.reason)",
                ])
            do {
                try await queue.postpone(job, attempts: deliveries, after: delay, entryID: entry.id)
                await finish(entry.id)
            } catch {
                // Still pending: the reclaim loop retries it after its back-off instead.
                logger.warning("postponing failed", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
            }
        } catch {
            failed.increment()
            logger.warning(
                "job failed; it will be retried",
                metadata: [
                    "queue": "\(queue.name)", "id": "\(entry.id)", "attempt": "\(deliveries)", "error": "\(error)",
                ])
            if deliveries >= queue.configuration.maxAttempts || error is PermanentJobFailure {
                await bury(entry.id, job: job, reason: "\(error)")
            }
        }
    }

    /// The handler, tried again in place after a failure until `deadline` (the queue's hold on
    /// its order): the jobs after it wait. A handler's ``RetryLater`` or
    /// ``PermanentJobFailure`` is its own decision, and goes to the queue at once.
    ///
    /// A failure that is a dependency's outage (``ParleyCore/DependencyError``: PostgreSQL
    /// down, say) holds the order for as long as it lasts: the jobs after it would fail as
    /// well, and given back, this one would be handled after them (a webhook's deliveries out
    /// of their room's order). Its claim, and those of the jobs read after it, are renewed each
    /// hold, so no other consumer takes them meanwhile; only the outage ending, another error
    /// or the shutdown let it go.
    private func handleHoldingOrder(_ job: String, id: String, until deadline: ContinuousClock.Instant) async throws {
        var deadline = deadline
        var wait = Duration.milliseconds(100)
        while true {
            do {
                return try await handler(job)
            } catch let error where !(error is RetryLater) && !(error is PermanentJobFailure) {
                guard !Task.isShuttingDownGracefully else { throw error }
                if ContinuousClock.now + wait >= deadline {
                    guard queue.configuration.holdOrderFor > .zero, Self.isOutage(error),
                        (try? await queue.renewClaims(holding: id, for: consumer)) == true
                    else { throw error }
                    deadline = ContinuousClock.now + queue.configuration.holdOrderFor
                }
                failed.increment()
                logger.warning(
                    "job failed; trying again in place",
                    metadata: ["queue": "\(queue.name)", "id": "\(id)", "error": "\(error)"])
                // Never past the hold: the claims are renewed before they could lapse.
                try await Task.sleep(for: min(wait, deadline - ContinuousClock.now))
                wait = min(wait * 2, .seconds(2))
            }
        }
    }

    static func isOutage(_ error: any Error) -> Bool {
        (error as? any DependencyError)?.isUnavailability == true
    }

    private func finish(_ id: String) async {
        do {
            try await queue.finish(id)
        } catch {
            // Not acknowledged: it will be claimed and handled again (handlers are idempotent).
            logger.warning("job acknowledgement failed", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        }
    }

    private func bury(_ id: String, job: String, reason: String) async {
        do {
            try await queue.bury(id, job: job, reason: reason)
            dead.increment()
            logger.error(
                "job moved to the dead-letter stream", metadata: ["queue": "\(queue.name)", "reason": "\(reason)"])
        } catch {
            logger.warning("dead-lettering failed", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        }
    }
}

/// What a concurrent consumer has running and how many jobs it finished.
final class RunningJobs: Sendable {
    private let state = Mutex((finished: 0, running: Set<String>()))
    func start(_ id: String) { state.withLock { _ = $0.running.insert(id) } }
    func end(_ id: String) {
        state.withLock {
            $0.running.remove(id)
            $0.finished += 1
        }
    }
    var count: Int { state.withLock { $0.finished } }
    var running: Set<String> { state.withLock { $0.running } }
}

/// Paces the consumer's periodic chores; due at once on the first ask.
struct Housekeeping {
    let interval: Duration
    private var last: ContinuousClock.Instant?

    init(interval: Duration) { self.interval = interval }

    mutating func isDue(now: ContinuousClock.Instant = .now) -> Bool {
        if let last, now - last < interval { return false }
        last = now
        return true
    }
}
