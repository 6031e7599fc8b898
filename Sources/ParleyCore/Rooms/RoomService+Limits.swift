/// The per-user limits against abuse, counted in token buckets (<doc:AbuseLimits>).
extension RoomService {
    /// Takes `count` of the user's `what` bucket, or refuses all of them (429 `rate-limited`):
    /// the one check of every per-user limit (uploads' too) but messages', which their
    /// batches take (``MessageBudgets``).
    public func spend(_ what: String, _ count: Int, of bucket: RateBucket, by userID: Int64) async throws {
        let key = MessageBudgets.key(what, userID)
        if let allowance = await budgets.allowances([key: count], of: bucket)[key], allowance.allowed < count {
            throw ParleyError.tooMany(what, retryAfter: allowance.retryAfter)
        }
    }
}
