/// The per-user limits against abuse, counted in token buckets (<doc:AbuseLimits>).
extension RoomService {
    /// What each key's bucket lets go now. Without an answer from the buckets' store in time
    /// (Redis away or slow) everything goes: a limit against abuse does not stop or slow the
    /// chat while Redis restarts (``BucketStoreGuard``).
    func allowances(_ counts: [String: Int], of bucket: RateBucket) async -> [String: Allowance] {
        guard let buckets else { return [:] }
        return await bucketStore.ask { try await buckets.take(counts, from: bucket) } ?? [:]
    }

    /// Takes `count` of the user's `what` bucket, or refuses all of them (429 `rate-limited`):
    /// the one check of every per-user limit (uploads' too).
    public func spend(_ what: String, _ count: Int, of bucket: RateBucket, by userID: Int64) async throws {
        let key = Self.bucketKey(what, userID)
        if let allowance = await allowances([key: count], of: bucket)[key], allowance.allowed < count {
            throw ParleyError.tooMany(what, retryAfter: allowance.retryAfter)
        }
    }

    static func bucketKey(_ what: String, _ userID: Int64) -> String { "\(what):\(userID)" }
}
