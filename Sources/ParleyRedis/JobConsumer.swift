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
        // Redis may be down or still loading its data: wait for it rather than stop the worker.
        var backoff = Duration.milliseconds(100)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await queue.ensureGroup()
                break
            } catch {
                await pause(after: error, backoff: &backoff)
            }
        }
        if queue.configuration.concurrency > 1 {
            await runConcurrently()
            return
        }
        backoff = .milliseconds(100)
        var housekeeping = Housekeeping(interval: housekeepingInterval)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if housekeeping.isDue() {
                    await promoteDue()
                    for item in try await claimDue(limit: Int.max) {
                        await process(item.entry, deliveries: item.deliveries)
                    }
                    depth.record(try await queue.depth())
                }
                for item in try await readNew(count: queue.configuration.batchSize, block: queue.configuration.blockFor)
                {
                    await process(item.entry, deliveries: item.deliveries)
                }
                backoff = .milliseconds(100)
            } catch {
                await pause(after: error, backoff: &backoff)
            }
        }
    }

    /// Up to `concurrency` handlers at once, each slot refilled as soon as its job ends: one
    /// slow job holds one slot, not a batch. Graceful shutdown lets the running jobs finish.
    private func runConcurrently() async {
        let limit = queue.configuration.concurrency
        let jobs = RunningJobs()
        let freed = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
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
                do {
                    let due = housekeeping.isDue()
                    if due { await promoteDue() }
                    // Never reclaim a job this consumer is still running, however long it takes.
                    var items = due ? try await claimDue(limit: limit - running, excluding: jobs.running) : []
                    if running + items.count < limit {
                        // Wait for new jobs only when nothing runs; otherwise look again soon.
                        let block = running + items.count == 0 ? queue.configuration.blockFor : .milliseconds(50)
                        items += try await readNew(count: limit - running - items.count, block: block)
                    }
                    for item in items {
                        started += 1
                        jobs.start(item.entry.id)
                        group.addTask {
                            await process(item.entry, deliveries: item.deliveries)
                            jobs.end(item.entry.id)
                            freed.continuation.yield()
                        }
                    }
                    if due { depth.record(try await queue.depth()) }
                    backoff = .milliseconds(100)
                } catch {
                    await pause(after: error, backoff: &backoff)
                }
            }
        }
    }

    /// How often postponed jobs are promoted, abandoned ones claimed and the depth recorded:
    /// once a second (or per visibility timeout, if shorter), not on every read, which at a
    /// job per read would quadruple the round trips to Redis.
    var housekeepingInterval: Duration { min(.seconds(1), queue.configuration.visibilityTimeout) }

    private func promoteDue() async {
        do {
            try await queue.promoteDue()
        } catch {
            logger.warning("postponed jobs not promoted", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        }
    }

    private func pause(after error: any Error, backoff: inout Duration) async {
        logger.warning("job queue unavailable; retrying", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        try? await Task.sleep(for: backoff)
        backoff = min(backoff * 2, .seconds(5))
    }

    /// New jobs, waiting up to `block` for some to arrive.
    func readNew(count: Int, block: Duration) async throws -> [(entry: RedisJobQueue.Entry, deliveries: Int)] {
        let reply = try await queue.pool.send(
            "XREADGROUP", "GROUP", RedisJobQueue.group, consumer, "COUNT", String(max(count, 1)),
            "BLOCK", String(max(milliseconds(block), 1)), "STREAMS", queue.stream, ">")
        guard let streams = reply.array, let first = streams.first?.array, first.count == 2 else { return [] }
        return RedisJobQueue.entries(first[1]).map { ($0, 1) }
    }

    /// Jobs left unacknowledged long enough (their consumer died or their handler failed),
    /// claimed for this consumer, at most `limit`.
    ///
    /// The pending list is read page by page (up to a bound per round), so jobs still in
    /// their back-off at its head do not hide due ones behind them.
    func claimDue(limit: Int, excluding running: Set<String> = []) async throws -> [(
        entry: RedisJobQueue.Entry, deliveries: Int
    )] {
        let minimumIdle = queue.configuration.visibilityTimeout
        var claimed: [(entry: RedisJobQueue.Entry, deliveries: Int)] = []
        var start = "-"
        for _ in 0..<16 where claimed.count < limit {
            let page = try await queue.pool.send(
                "XPENDING", queue.stream, RedisJobQueue.group, "IDLE", String(milliseconds(minimumIdle)), start, "+",
                String(queue.configuration.batchSize))
            let items = page.array ?? []
            claimed += try await claim(
                items.filter { $0.array?.first?.string.map { !running.contains($0) } ?? true },
                limit: limit - claimed.count)
            guard items.count == queue.configuration.batchSize, let last = items.last?.array?.first?.string else {
                break
            }
            start = "(" + last
        }
        return claimed
    }

    private func claim(_ items: [RedisValue], limit: Int) async throws -> [(
        entry: RedisJobQueue.Entry, deliveries: Int
    )] {
        var claimedEntries: [(entry: RedisJobQueue.Entry, deliveries: Int)] = []
        for item in items where claimedEntries.count < limit {
            guard let fields = item.array, fields.count == 4, let id = fields[0].string,
                let idle = fields[2].integer, let deliveries = fields[3].integer
            else { continue }
            let due = queue.backoff(afterDeliveries: Int(deliveries))
            guard idle >= milliseconds(due) else { continue }
            // XCLAIM with the same idle bound: if another consumer claimed it first, nothing returns.
            let claimed = try await queue.pool.send(
                "XCLAIM", queue.stream, RedisJobQueue.group, consumer, String(milliseconds(due)), id)
            guard let entry = RedisJobQueue.entries(claimed).first else {
                // Deleted meanwhile (a dead-lettered or finished job): drop it from the pending list.
                _ = try await queue.pool.send("XACK", queue.stream, RedisJobQueue.group, id)
                continue
            }
            claimedEntries.append((entry, Int(deliveries) + 1))
        }
        return claimedEntries
    }

    /// - Parameter deliveries: deliveries of this stream entry; a postponed job also counts
    ///   the attempts made before it was postponed.
    func process(_ entry: RedisJobQueue.Entry, deliveries: Int) async {
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
            try await handler(job)
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

    private func finish(_ id: String) async {
        do {
            _ = try await queue.pool.send("XACK", queue.stream, RedisJobQueue.group, id)
            _ = try await queue.pool.send("XDEL", queue.stream, id)
        } catch {
            // Not acknowledged: it will be claimed and handled again (handlers are idempotent).
            logger.warning("job acknowledgement failed", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        }
    }

    private func bury(_ id: String, job: String, reason: String) async {
        do {
            _ = try await queue.pool.send("XADD", queue.deadLetterStream, "*", "job", job, "reason", reason)
            dead.increment()
            logger.error(
                "job moved to the dead-letter stream", metadata: ["queue": "\(queue.name)", "reason": "\(reason)"])
            await finish(id)
        } catch {
            logger.warning("dead-lettering failed", metadata: ["queue": "\(queue.name)", "error": "\(error)"])
        }
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
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
