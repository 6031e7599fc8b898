import ParleyCore
import Synchronization
import Testing

/// A busy key's tokens are taken a little ahead and spent locally; nothing is allowed that the
/// store did not grant.
struct LeasedTokenBucketsTests {
    /// A clock the test moves.
    final class TestClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// Counts the store's requests over buckets that never refill.
    actor RecordingBuckets: TokenBuckets {
        private let buckets = CountingBuckets()
        private(set) var requests = 0

        func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
            requests += 1
            return try await buckets.take(counts, from: bucket)
        }
    }

    let clock = TestClock()
    let store = RecordingBuckets()
    var leased: LeasedTokenBuckets {
        LeasedTokenBuckets(store: store, window: .milliseconds(250)) { [clock] in clock.now }
    }

    func allowed(_ buckets: LeasedTokenBuckets, _ times: Int, of bucket: RateBucket) async throws -> Int {
        var allowed = 0
        for _ in 0..<times { allowed += try await buckets.take(["u"], from: bucket)["u"]?.allowed ?? 0 }
        return allowed
    }

    @Test func aBusyKeyAsksTheStoreOnceAWindowAfterItsFirst() async throws {
        let buckets = leased
        let bucket = RateBucket(perSecond: 1_000, burst: 100_000)
        // No demand known yet: every take asks.
        #expect(try await allowed(buckets, 10, of: bucket) == 10)
        #expect(await store.requests == 10)
        // The next window leases the last one's demand with its first take.
        clock.advance(.milliseconds(250))
        #expect(try await allowed(buckets, 11, of: bucket) == 11)
        #expect(await store.requests == 11)
    }

    @Test func leasesNeverAllowMoreThanTheStoreGranted() async throws {
        let buckets = leased
        // Eight tokens in all, never refilled; at most two leased at once (a quarter).
        let bucket = RateBucket(perSecond: 1, burst: 8)
        var total = 0
        for _ in 0..<5 {
            total += try await allowed(buckets, 4, of: bucket)
            clock.advance(.milliseconds(250))
        }
        #expect(total <= 8)
        let refusal = try await buckets.take(["u": 1], from: bucket)["u"]
        #expect(refusal?.allowed == 0 && refusal?.retryAfter == 1)
    }

    @Test func whatALeaseHoldsEndsWithItsWindow() async throws {
        let buckets = leased
        let bucket = RateBucket(perSecond: 1_000, burst: 100_000)
        _ = try await allowed(buckets, 4, of: bucket)
        clock.advance(.milliseconds(250))
        _ = try await allowed(buckets, 1, of: bucket)  // takes 1 and leases 4
        let requests = await store.requests
        clock.advance(.milliseconds(300))
        _ = try await allowed(buckets, 1, of: bucket)
        #expect(await store.requests == requests + 1, "a lease outlived its window")
    }

    @Test func aKeySendingNowAndThenLeasesNothing() async throws {
        let buckets = leased
        let bucket = RateBucket(perSecond: 10, burst: 30)
        for _ in 0..<5 {
            _ = try await allowed(buckets, 1, of: bucket)
            clock.advance(.seconds(1))
        }
        // One token a take, as without leases: nothing was taken ahead and dropped.
        #expect(await store.requests == 5)
        #expect(try await allowed(buckets, 25, of: bucket) == 25)
    }
}

extension TokenBuckets {
    func take(_ keys: [String], from bucket: RateBucket) async throws -> [String: Allowance] {
        try await take(Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }), from: bucket)
    }
}
