/// The message budgets of a batch of sends (<doc:AbuseLimits>): each sender's first
/// messages in the batch take their budget and the rest are refused; a retry of a stored
/// message is answered as stored, whatever the budget. One ask of the buckets a batch, for the
/// ingest's batches and the REST sends' group commits alike: a REST send asked on its own
/// cost a round trip to Redis and a timed task per request.
struct MessageBudgets: Sendable {
    let limits: AbuseLimits
    /// Without buckets, only the per-request bound holds.
    let buckets: (any TokenBuckets)?
    let store: BucketStoreGuard
    /// Which senders spend a bot's message budget; nil: none do.
    let bots: BotRoster?

    /// - Parameter patience: how long one ask of the buckets' store may take before the batch
    ///   goes without its answer (``BucketStoreGuard``).
    init(
        limits: AbuseLimits, buckets: (any TokenBuckets)?, bots: BotRoster?, patience: Duration
    ) {
        self.limits = limits
        self.buckets = buckets
        self.bots = bots
        store = BucketStoreGuard(patience: patience)
    }

    /// What each key's bucket lets go now. Without an answer from the buckets' store in time
    /// (Redis away or slow) everything goes: a limit against abuse does not stop or slow the
    /// chat while Redis restarts (``BucketStoreGuard``).
    func allowances(_ counts: [String: Int], of bucket: RateBucket) async -> [String: Allowance] {
        guard let buckets else { return [:] }
        return await store.ask { try await buckets.take(counts, from: bucket) } ?? [:]
    }

    /// Per send, its refusal (429 `rate-limited`), or nil where it goes on to be stored. Sends
    /// that spend no budget (``MessageSubmission/spendsBudget``) always go on.
    func refusals(_ batch: [MessageSubmission], messages: any MessageRepository) async throws -> [SendOutcome?] {
        let spending = batch.filter(\.spendsBudget)
        guard buckets != nil, !spending.isEmpty else { return batch.map { _ in nil } }
        let botIDs = await bots?.bots(among: Set(spending.map(\.senderID))) ?? []
        func counts(bots: Bool) -> [String: Int] {
            Dictionary(
                spending.filter { botIDs.contains($0.senderID) == bots }.map { (Self.key("messages", $0.senderID), 1) },
                uniquingKeysWith: +)
        }
        var allowances = await allowances(counts(bots: false), of: limits.messages)
        if !botIDs.isEmpty {
            allowances.merge(await self.allowances(counts(bots: true), of: limits.botMessages)) { user, _ in user }
        }
        var taken: [Int64: Int] = [:]
        var refusals = batch.map { submission -> SendOutcome? in
            guard submission.spendsBudget else { return nil }
            taken[submission.senderID, default: 0] += 1
            guard let allowance = allowances[Self.key("messages", submission.senderID)],
                taken[submission.senderID, default: 0] > allowance.allowed
            else { return nil }
            return .failure(ParleyError.tooMany("messages", retryAfter: allowance.retryAfter))
        }
        // Retries of stored messages (a client that sends again with the same uid) are
        // answered as stored, whatever the budget: one look-up, only when the budget refused.
        let refused = batch.indices.filter { refusals[$0] != nil }
        if !refused.isEmpty {
            let stored = try await messages.storedKeys(Set(refused.map { batch[$0].key }))
            for index in refused where stored.contains(batch[index].key) { refusals[index] = nil }
        }
        return refusals
    }

    /// The bucket of `what` of a user.
    static func key(_ what: String, _ userID: Int64) -> String { "\(what):\(userID)" }
}
