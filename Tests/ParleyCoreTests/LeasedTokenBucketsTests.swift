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

    /// What `rounds` rounds of `times` takes each allowed, the clock moved by `step` after each.
    func allowed(
        _ buckets: LeasedTokenBuckets, _ times: Int, of bucket: RateBucket, rounds: Int, step: Duration
    ) async throws -> Int {
        var total = 0
        for _ in 0..<rounds {
            total += try await allowed(buckets, times, of: bucket)
            clock.advance(step)
        }
        return total
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
        let total = try await allowed(buckets, 4, of: bucket, rounds: 5, step: .milliseconds(250))
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

    // With an idle lease (as `parley` runs its message budgets).

    var leasedWhenIdle: LeasedTokenBuckets {
        LeasedTokenBuckets(store: store, window: .milliseconds(250), idleLease: .seconds(10)) { [clock] in clock.now }
    }

    @Test func aKeyAskingNowAndThenLeasesAQuarterBurstForTheIdleLease() async throws {
        let buckets = leasedWhenIdle
        // Ten a second after thirty: a lease of seven (a quarter), refilled in 0.7 s.
        let bucket = RateBucket(perSecond: 10, burst: 30)
        for _ in 0..<9 {
            #expect(try await allowed(buckets, 1, of: bucket) == 1)
            clock.advance(.seconds(1))
        }
        // The first ask took one and leased seven; the ninth asked again.
        #expect(await store.requests == 2)
        // Every token the store granted (it never refills), in this process, and no more.
        #expect(try await allowed(buckets, 30, of: bucket) == 30 - 9)
    }

    @Test func anIdleLeaseEndsWithItsLease() async throws {
        let buckets = leasedWhenIdle
        let bucket = RateBucket(perSecond: 10, burst: 30)
        _ = try await allowed(buckets, 1, of: bucket)
        clock.advance(.seconds(10))
        _ = try await allowed(buckets, 1, of: bucket)
        #expect(await store.requests == 2, "a lease outlived its idle lease")
    }

    @Test func anHourlyBucketLeasesNothingWhenIdle() async throws {
        let buckets = leasedWhenIdle
        // Twenty an hour refills nothing in ten seconds: nothing to lease without charging ahead.
        for _ in 0..<3 {
            _ = try await allowed(buckets, 1, of: .perHour(20))
            clock.advance(.seconds(1))
        }
        #expect(await store.requests == 3)
    }

    @Test func idleLeasesNeverAllowMoreThanTheStoreGranted() async throws {
        let buckets = leasedWhenIdle
        let bucket = RateBucket(perSecond: 10, burst: 8)
        let total = try await allowed(buckets, 1, of: bucket, rounds: 12, step: .seconds(4))
        // All eight, and no more: every lease was spent before it ended.
        #expect(total == 8)
        #expect(try await buckets.take(["u": 1], from: bucket)["u"]?.allowed == 0)
    }

    @Test func onlyTheFirstOfConcurrentAsksLeasesAhead() async throws {
        let gated = GatedBuckets()
        let buckets = LeasedTokenBuckets(store: gated, idleLease: .seconds(10)) { [clock] in clock.now }
        let bucket = RateBucket(perSecond: 10, burst: 30)
        let first = Task { try await buckets.take(["u": 1], from: bucket) }
        for _ in 0..<1_000 where await gated.asked.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        // (Else the next take would be the one held, and the test would wait for ever.)
        try #require(await gated.asked.count == 1)
        // The first ask waits in the store; a second for the same key takes only what it needs.
        #expect(try await buckets.take(["u": 1], from: bucket)["u"]?.allowed == 1)
        await gated.open()
        #expect(try await first.value["u"]?.allowed == 1)
        #expect(await gated.asked == [8, 1])
    }
}

/// Buckets that never refill and hold their first ask until opened.
actor GatedBuckets: TokenBuckets {
    private let buckets = CountingBuckets()
    private(set) var asked: [Int] = []
    private var gate: CheckedContinuation<Void, Never>?
    private var opened = false

    func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
        asked.append(counts.values.reduce(0, +))
        if asked.count == 1, !opened { await withCheckedContinuation { gate = $0 } }
        return try await buckets.take(counts, from: bucket)
    }

    func open() {
        opened = true
        gate?.resume()
        gate = nil
    }
}

extension TokenBuckets {
    func take(_ keys: [String], from bucket: RateBucket) async throws -> [String: Allowance] {
        try await take(Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }), from: bucket)
    }
}
