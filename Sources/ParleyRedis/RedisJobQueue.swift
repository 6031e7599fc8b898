import Foundation
import Logging
import Metrics
import ParleyCore

/// A job queue on one Redis Stream with a consumer group.
///
/// Jobs are delivered at least once: a consumer acknowledges (and deletes) a job after its
/// handler succeeded. A job left unacknowledged — its consumer died, or its handler failed
/// — is claimed again by any consumer once it has been idle for the visibility timeout,
/// doubled for each earlier delivery (the retry back-off). After `maxAttempts` deliveries
/// it moves to the dead-letter stream `<stream>:dead` with its last error.
///
/// A handler may ask for a later retry (``RetryLater``, e.g. a provider's `Retry-After`): the
/// job waits in the sorted set `<stream>:delayed`, scored by when it is due, and returns to
/// the stream with its attempt count when a consumer next looks.
public struct RedisJobQueue: JobQueue {
    public struct Configuration: Sendable {
        public var maxAttempts: Int
        public var visibilityTimeout: Duration
        public var maximumBackoff: Duration
        /// How many jobs one read takes.
        public var batchSize: Int
        /// How long a read waits for new jobs (and so how late a postponed job may start).
        public var blockFor: Duration
        /// Handlers one consumer runs at once; 1 keeps the queue's order.
        public var concurrency: Int
        /// How long after its read a failed job is tried again in place (100 ms, doubling to
        /// 2 s) before it is given back to the queue. A serial queue's later jobs wait behind it,
        /// so a short outage (PostgreSQL restarting) keeps their order; a job given back is
        /// retried after the visibility timeout, the jobs after it first. Zero: given back at
        /// once. At most two thirds of the visibility timeout, so no other consumer claims the
        /// job meanwhile. A dependency's outage holds it longer, its claims renewed each hold
        /// (``JobConsumer``).
        public var holdOrderFor: Duration {
            get { _holdOrderFor }
            set { _holdOrderFor = min(newValue, visibilityTimeout * 2 / 3) }
        }
        private var _holdOrderFor: Duration = .zero

        public init(
            maxAttempts: Int = 5, visibilityTimeout: Duration = .seconds(30), maximumBackoff: Duration = .seconds(600),
            batchSize: Int = 32, blockFor: Duration = .seconds(2), concurrency: Int = 1, holdOrderFor: Duration = .zero
        ) {
            self.maxAttempts = maxAttempts
            self.visibilityTimeout = visibilityTimeout
            self.maximumBackoff = maximumBackoff
            self.batchSize = batchSize
            self.blockFor = blockFor
            self.concurrency = concurrency
            self.holdOrderFor = holdOrderFor
        }
    }

    public let name: String
    let pool: RedisConnectionPool
    public let configuration: Configuration
    static let group = "parley"

    public init(name: String, pool: RedisConnectionPool, configuration: Configuration = Configuration()) {
        self.name = name
        self.pool = pool
        self.configuration = configuration
    }

    /// A queue's keys share the hash tag `{name}`: one Redis Cluster slot, so the scripts that
    /// use several of them work on a cluster as they are, with no data to move.
    public var stream: String { "parley:jobs:{\(name)}" }
    public var deadLetterStream: String { "\(stream):dead" }
    public var delayedSet: String { "\(stream):delayed" }
    /// The keys before the hash tag, moved into the tagged ones by the first consumer to start.
    var legacyKeys: [String] { ["parley:jobs:\(name)", "parley:jobs:\(name):dead", "parley:jobs:\(name):delayed"] }

    public func enqueue(_ job: String) async throws {
        try await enqueue(contentsOf: [job])
    }

    /// Adds jobs in one round trip (pipelined `XADD`s); fails if any was refused. With
    /// `waitReplicas`, returns once that many replicas hold them too (`WAIT`), so a job that
    /// counts as queued survives the primary's loss to a Sentinel failover. Fewer within the
    /// wait (a replica down or behind) is counted, not failed: the jobs are on the primary,
    /// and failing would have every caller queue them again, and again, while the replicas are
    /// short (after a failover, the promoted replica has none until another joins).
    public func enqueue(contentsOf jobs: [String]) async throws {
        guard !jobs.isEmpty else { return }
        let replicas = pool.configuration.waitReplicas
        var commands = jobs.map { ["XADD", stream, "*", "job", $0] }
        if replicas > 0 {
            commands.append(["WAIT", String(replicas), String(Int(pool.configuration.waitTimeout / .milliseconds(1)))])
        }
        let results = try await pool.pipeline(commands)
        for result in results { _ = try result.get() }
        if replicas > 0, let acknowledged = try results.last?.get().integer, acknowledged < replicas {
            Counter(label: "parley_jobs_unreplicated_total", dimensions: [("queue", name)]).increment(by: jobs.count)
        }
    }

    /// Jobs waiting or in flight.
    public func depth() async throws -> Int {
        Int(try await pool.send("XLEN", stream).integer ?? 0)
    }

    public func deadLetters() async throws -> [String] {
        let reply = try await pool.send("XRANGE", deadLetterStream, "-", "+")
        return Self.entries(reply).compactMap { $0.fields["job"] }
    }

    /// Jobs waiting for their retry time.
    public func postponed() async throws -> Int {
        Int(try await pool.send("ZCARD", delayedSet).integer ?? 0)
    }

    /// Parks a job until `due`; the member keeps the attempts and the old entry id (unique).
    func postpone(_ job: String, attempts: Int, after delay: Duration, entryID: String) async throws {
        let dueMilliseconds = Int64(Date().timeIntervalSince1970 * 1000) + delay.milliseconds
        _ = try await pool.send("ZADD", delayedSet, String(dueMilliseconds), "\(attempts)|\(entryID)|\(job)")
    }

    /// Moves due postponed jobs back into the stream (at most a batch); one script, so two
    /// consumers never both move one.
    func promoteDueCommand() -> [String] {
        [
            "EVAL", Self.promoteScript, "3", delayedSet, stream, deadLetterStream,
            String(Int64(Date().timeIntervalSince1970 * 1000)), String(configuration.batchSize),
        ]
    }

    static let migrateScript = """
        for i = 1, 2 do
            if redis.call('TYPE', KEYS[i])['ok'] == 'stream' then
                for _, entry in ipairs(redis.call('XRANGE', KEYS[i], '-', '+')) do
                    redis.call('XADD', KEYS[i + 3], '*', unpack(entry[2]))
                end
                redis.call('DEL', KEYS[i])
            end
        end
        if redis.call('TYPE', KEYS[3])['ok'] == 'zset' then
            local members = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
            for j = 1, #members, 2 do redis.call('ZADD', KEYS[6], members[j + 1], members[j]) end
            redis.call('DEL', KEYS[3])
        end
        return 0
        """

    static let promoteScript = """
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
        for _, member in ipairs(due) do
            redis.call('ZREM', KEYS[1], member)
            local first = string.find(member, '|', 1, true)
            local second = first and string.find(member, '|', first + 1, true)
            if second then
                redis.call('XADD', KEYS[2], '*', 'job', string.sub(member, second + 1),
                           'attempts', string.sub(member, 1, first - 1))
            else
                redis.call('XADD', KEYS[3], '*', 'job', member, 'reason', 'malformed postponed entry')
            end
        end
        return #due
        """

    func ensureGroup() async throws {
        // Before the hash tag: what an older version queued moves into the tagged keys. Its
        // consumer-group state does not: a job read and not yet acknowledged then is delivered
        // again (at least once, as always). One script, so two consumers never both move a job.
        _ = try await pool.send(
            ["EVAL", Self.migrateScript, "6"] + legacyKeys + [stream, deadLetterStream, delayedSet])
        do {
            _ = try await pool.send("XGROUP", "CREATE", stream, Self.group, "0", "MKSTREAM")
        } catch RedisError.server(let message) where message.hasPrefix("BUSYGROUP") {}
    }

    /// Wait between deliveries of one job: the visibility timeout, doubled per delivery.
    func backoff(afterDeliveries deliveries: Int) -> Duration {
        let factor = 1 << min(max(deliveries - 1, 0), 20)
        return min(configuration.visibilityTimeout * factor, configuration.maximumBackoff)
    }

    struct Entry {
        let id: String
        let fields: [String: String]
    }

    /// Parses `[[id, [field, value, ...]], ...]` (XRANGE, XCLAIM, one stream of XREADGROUP).
    static func entries(_ reply: RedisValue) -> [Entry] {
        (reply.array ?? []).compactMap { item in
            guard let parts = item.array, parts.count == 2, let id = parts[0].string, let flat = parts[1].array else {
                return nil
            }
            var fields: [String: String] = [:]
            var index = 0
            while index + 1 < flat.count {
                if let key = flat[index].string { fields[key] = flat[index + 1].string }
                index += 2
            }
            return Entry(id: id, fields: fields)
        }
    }
}
