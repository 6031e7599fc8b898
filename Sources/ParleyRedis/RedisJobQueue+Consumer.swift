/// The stream commands a consumer of the queue sends: reading new jobs, claiming abandoned
/// ones, acknowledging and dead-lettering. ``JobConsumer`` decides when; these say how.
extension RedisJobQueue {
    /// A job read for a consumer, and how many times its stream entry has been delivered.
    struct Delivery {
        let entry: Entry
        let deliveries: Int
        /// When this consumer read it: the start of its hold on the queue's order.
        var readAt = ContinuousClock.now
    }

    /// New jobs for `consumer`, waiting up to `block` for some to arrive.
    func readNew(for consumer: String, count: Int, block: Duration) async throws -> [Delivery] {
        let reply = try await pool.send(
            "XREADGROUP", "GROUP", Self.group, consumer, "COUNT", String(max(count, 1)),
            "BLOCK", String(max(block.milliseconds, 1)), "STREAMS", stream, ">")
        guard let streams = reply.array, let first = streams.first?.array, first.count == 2 else { return [] }
        return Self.entries(first[1]).map { Delivery(entry: $0, deliveries: 1) }
    }

    /// A consumer's housekeeping in one round trip: due postponed jobs promoted (a failure of
    /// that script is only reported), the stream's depth after them, and jobs left
    /// unacknowledged long enough (their consumer died or their handler failed) claimed for
    /// `consumer`, at most `limit`, none of `excluded` (jobs it still runs). Three round trips
    /// a second for every consumer of every queue, idle or not, were most of an idle
    /// worker's requests to Redis.
    func housekeep(
        for consumer: String, limit: Int, excluding excluded: Set<String>
    ) async throws -> HousekeepingRound {
        let replies = try await pool.pipeline([
            promoteDueCommand(),
            pendingPage(from: "-"),
            ["XLEN", stream],
        ])
        let depth = Int(try replies[2].get().integer ?? 0)
        let claimed = try await claimDue(
            for: consumer, limit: limit, excluding: excluded, firstPage: try replies[1].get())
        return HousekeepingRound(promoted: replies[0].map { _ in () }, depth: depth, claimed: claimed)
    }

    /// What ``housekeep(for:limit:excluding:)`` did.
    struct HousekeepingRound {
        /// The promotion's outcome: its error does not hold up the rest.
        let promoted: Result<Void, RedisError>
        let depth: Int
        let claimed: [Delivery]
    }

    /// Jobs left unacknowledged long enough, claimed for `consumer` (see
    /// ``housekeep(for:limit:excluding:)``), from the pending list's `firstPage` on.
    ///
    /// The pending list is read page by page (up to a bound per round), so jobs still in
    /// their back-off at its head do not hide due ones behind them.
    private func claimDue(
        for consumer: String, limit: Int, excluding excluded: Set<String>, firstPage: RedisValue
    ) async throws -> [Delivery] {
        var claimed: [Delivery] = []
        var page = firstPage
        for round in 1...16 {
            let items = page.array ?? []
            for item in items where claimed.count < limit {
                guard let fields = item.array, fields.count == 4, let id = fields[0].string, !excluded.contains(id),
                    let idle = fields[2].integer, let deliveries = fields[3].integer
                else { continue }
                let due = backoff(afterDeliveries: Int(deliveries))
                guard idle >= due.milliseconds else { continue }
                if let entry = try await claim(id, for: consumer, minimumIdle: due) {
                    claimed.append(Delivery(entry: entry, deliveries: Int(deliveries) + 1))
                }
            }
            guard round < 16, claimed.count < limit, items.count == configuration.batchSize,
                let last = items.last?.array?.first?.string
            else { break }
            page = try await pool.send(pendingPage(from: "(" + last))
        }
        return claimed
    }

    /// The pending entries idle for at least the visibility timeout, a page from `start`.
    private func pendingPage(from start: String) -> [String] {
        [
            "XPENDING", stream, Self.group, "IDLE", String(configuration.visibilityTimeout.milliseconds), start, "+",
            String(configuration.batchSize),
        ]
    }

    /// XCLAIM with the idle bound it was found with: if another consumer claimed it first,
    /// nothing returns; if it was deleted meanwhile (finished or dead-lettered), it leaves the
    /// pending list.
    private func claim(_ id: String, for consumer: String, minimumIdle: Duration) async throws -> Entry? {
        let claimed = try await pool.send("XCLAIM", stream, Self.group, consumer, String(minimumIdle.milliseconds), id)
        guard let entry = Self.entries(claimed).first else {
            _ = try await pool.send("XACK", stream, Self.group, id)
            return nil
        }
        return entry
    }

    /// Resets the idle time of every job `consumer` holds (`XCLAIM` to itself, deliveries not
    /// counted): the one it keeps trying and those read after it, so that no other consumer
    /// claims them meanwhile. False when `id` is no longer this consumer's (another claimed it,
    /// or it is gone).
    func renewClaims(holding id: String, for consumer: String) async throws -> Bool {
        try await pool.send(
            "EVAL", Self.renewScript, "1", stream, Self.group, consumer, id, String(configuration.batchSize * 4)
        ).integer == 1
    }

    /// Atomic, so that a job another consumer claimed meanwhile is never taken back from it.
    static let renewScript = """
        local ids, held = {}, 0
        for _, entry in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[4]), ARGV[2])) do
            ids[#ids + 1] = entry[1]
            if entry[1] == ARGV[3] then held = 1 end
        end
        if held == 0 then return 0 end
        ids[#ids + 1] = 'JUSTID'
        redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids))
        return 1
        """

    /// Acknowledges and deletes a handled job.
    func finish(_ id: String) async throws {
        // In one round trip. Deleted but not acknowledged (the acknowledgement's error reply)
        // leaves it pending, and a claim of a deleted entry acknowledges it.
        for reply in try await pool.pipeline([["XACK", stream, Self.group, id], ["XDEL", stream, id]]) {
            _ = try reply.get()
        }
    }

    /// Moves a job that will not succeed to the dead-letter stream, then finishes it.
    func bury(_ id: String, job: String, reason: String) async throws {
        _ = try await pool.send("XADD", deadLetterStream, "*", "job", job, "reason", reason)
        try await finish(id)
    }
}

extension Duration {
    /// Whole milliseconds, as Redis's commands take them.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
