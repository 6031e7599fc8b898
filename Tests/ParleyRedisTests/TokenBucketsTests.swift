import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyRedis

/// Token buckets in Redis: a burst at once, then the rate, many keys in one step.
struct TokenBucketsTests {
    @Test func aBurstGoesAtOnceThenTheRateRefills() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let buckets = RedisTokenBuckets(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        let bucket = RateBucket(perSecond: 4, burst: 3)
        // Five asked of a bucket of three: the first three go, the next in about 250 ms.
        let emptied = ContinuousClock.now
        let first = try await buckets.take(["a": 5, "b": 1], from: bucket)
        #expect(first["a"] == Allowance(allowed: 3, retryAfter: 1))
        #expect(first["b"]?.allowed == 1)
        #expect(try await buckets.take(["a": 1], from: bucket)["a"]?.allowed == 0)
        try await Task.sleep(for: .milliseconds(600))
        // About two tokens came back (4 a second), never more than the burst; on a loaded
        // machine the sleep may last longer, and what came back with it (a run overslept 750 ms).
        let refilled = try await buckets.take(["a": 3], from: bucket)["a"]?.allowed ?? -1
        let most = min(3, Int(4 * ((ContinuousClock.now - emptied) / .seconds(1))))
        #expect((1...max(2, most)).contains(refilled), "\(refilled) of at most \(most)")
        // "b" kept two and got about two more: the burst, three, caps it.
        #expect(try await buckets.take(["b": 5], from: bucket)["b"]?.allowed == 3)
    }

    /// An hourly budget's rate is a few millionths of a token a millisecond, which the script
    /// reads in Swift's exponent spelling (`5.555555555555556e-06`).
    @Test func anHourlyBucketWaitsItsShareOfTheHour() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let buckets = RedisTokenBuckets(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        let bucket = RateBucket.perHour(20)
        #expect(try await buckets.take(["a": 20], from: bucket)["a"]?.allowed == 20)
        let refused = try await buckets.take(["a": 1], from: bucket)["a"]
        #expect(refused?.allowed == 0)
        // The next token in an hour's twentieth: three minutes, less what has passed.
        #expect((175...180).contains(refused?.retryAfter ?? 0), "\(String(describing: refused))")
    }
}
