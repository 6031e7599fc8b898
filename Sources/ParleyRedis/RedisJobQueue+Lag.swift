import Metrics
import ParleyCore

/// How late a queue's jobs are: the oldest job no consumer has taken yet, and the taken job
/// most overdue for being claimed again.
public struct JobQueueLag: Sendable, Equatable {
    /// How long the oldest job not yet read by any consumer has waited (zero when none).
    public let oldestWaiting: Duration
    /// How long the oldest unacknowledged job has gone past its visibility timeout (its
    /// back-off for the deliveries it had) without another consumer claiming it; zero when none.
    public let oldestOverdue: Duration
}

extension RedisJobQueue {
    /// Reads the queue's lag from Redis (ages by Redis's own clock: entry ids are its
    /// milliseconds) and records `parley_jobs_oldest_waiting_seconds{queue}`.
    public func lag() async throws -> JobQueueLag {
        let replies = try await pool.pipeline([
            ["TIME"], ["XINFO", "GROUPS", stream], ["XPENDING", stream, Self.group, "-", "+", "1"],
        ])
        let time = (try replies[0].get()).array ?? []
        let now = (Int64(time.first?.string ?? "") ?? 0) * 1000 + (Int64(time.last?.string ?? "") ?? 0) / 1000
        // No stream or no group yet: nothing is waiting.
        let groups = (try? replies[1].get())?.array ?? []
        let delivered = groups.compactMap { Self.field("last-delivered-id", of: $0) }.first ?? "0-0"
        var waiting: Duration = .zero
        let next = try await pool.send("XRANGE", stream, "(\(delivered)", "+", "COUNT", "1")
        if let id = Self.entries(next).first?.id {
            waiting = .milliseconds(max(now - Self.milliseconds(of: id), 0))
        }
        var overdue: Duration = .zero
        if let pending = (try? replies[2].get())?.array?.first?.array, pending.count == 4,
            let idle = pending[2].integer, let deliveries = pending[3].integer
        {
            let allowed = backoff(afterDeliveries: Int(deliveries))
            overdue = max(.milliseconds(idle) - allowed, .zero)
        }
        Gauge(label: "parley_jobs_oldest_waiting_seconds", dimensions: [("queue", name)])
            .record(Double(waiting.components.seconds))
        return JobQueueLag(oldestWaiting: waiting, oldestOverdue: overdue)
    }

    /// The value after `name` in a flat `[name, value, ...]` reply.
    static func field(_ name: String, of reply: RedisValue) -> String? {
        guard let flat = reply.array else { return nil }
        var index = 0
        while index + 1 < flat.count {
            if flat[index].string == name { return flat[index + 1].string }
            index += 2
        }
        return nil
    }

    /// The Redis time, in milliseconds, encoded in a stream entry id (`<ms>-<seq>`).
    static func milliseconds(of id: String) -> Int64 {
        Int64(id.split(separator: "-").first ?? "") ?? 0
    }
}

/// Readiness of a worker role that consumes a queue: down when a job has waited longer than
/// the visibility timeout to be read, or a read job has gone unclaimed past its own timeout
/// (its consumer died and nobody takes over) — consumers that stopped, not a slow handler.
public struct JobQueueProbe: DependencyProbe {
    public let name: String
    let queue: RedisJobQueue

    public init(queue: RedisJobQueue) {
        self.queue = queue
        name = "\(queue.name)-queue"
    }

    public struct Stalled: Error, CustomStringConvertible {
        public let lag: JobQueueLag
        public var description: String {
            "oldest waiting job \(lag.oldestWaiting), most overdue job \(lag.oldestOverdue)"
        }
    }

    public func probe() async throws {
        let lag = try await queue.lag()
        let limit = queue.configuration.visibilityTimeout
        if lag.oldestWaiting > limit || lag.oldestOverdue > limit { throw Stalled(lag: lag) }
    }
}
