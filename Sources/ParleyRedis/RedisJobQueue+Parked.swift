import Foundation
import ParleyCore

/// Parked jobs wait in the queue's delayed set, beside postponed retries, so any consumer
/// queues them when due (``housekeep(for:limit:excluding:)``); a release takes them out first.
extension RedisJobQueue: ParkedJobs {
    /// Parks in one round trip (and, with `waitReplicas`, waits for the replicas as
    /// ``enqueue(contentsOf:)`` does).
    public func park(_ jobs: [String], until due: Date) async throws {
        guard !jobs.isEmpty else { return }
        let score = String(Int64(due.timeIntervalSince1970 * 1000))
        var commands = [["ZADD", delayedSet] + jobs.flatMap { [score, Self.parkedMember($0)] }]
        let replicas = pool.configuration.waitReplicas
        if replicas > 0 {
            commands.append(["WAIT", String(replicas), String(Int(pool.configuration.waitTimeout / .milliseconds(1)))])
        }
        for result in try await pool.pipeline(commands) { _ = try result.get() }
    }

    public func release(_ jobs: [String], joinedAfter header: String) async throws {
        guard !jobs.isEmpty else { return }
        precondition(jobs.allSatisfy { $0.hasPrefix(header) }, "a released job starts with its header")
        _ = try await pool.send(
            ["EVAL", Self.releaseScript, "2", delayedSet, stream, header, String(header.utf8.count)]
                + jobs.map(Self.parkedMember))
    }

    /// A parked job as the delayed set keeps it (`attempts|entry id|job`, as a postponed retry):
    /// no attempts yet, and the same member each time the same job is parked.
    static func parkedMember(_ job: String) -> String { "0|parked|\(job)" }

    /// Removes each job's parked member and queues the rest of each, joined behind the
    /// header, as one job.
    static let releaseScript = """
        local parts = {}
        local skip = string.len('0|parked|') + tonumber(ARGV[2])
        for i = 3, #ARGV do
            redis.call('ZREM', KEYS[1], ARGV[i])
            table.insert(parts, string.sub(ARGV[i], skip + 1))
        end
        redis.call('XADD', KEYS[2], '*', 'job', ARGV[1] .. table.concat(parts), 'attempts', '0')
        return #parts
        """
}
