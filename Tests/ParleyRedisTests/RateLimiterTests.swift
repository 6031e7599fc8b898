import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyRedis

/// Attempts count for exactly one window after they were made, across instances.
struct RateLimiterTests {
    @Test func attemptsLeaveTheWindowOneByOne() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let limiter = RedisRateLimiter(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        // Wide margins: a busy machine (the suite runs eight tests at once) may run a step late.
        let window = Duration.seconds(3)
        let start = ContinuousClock.now
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        try await Task.sleep(until: start + .milliseconds(1600))
        let third = ContinuousClock.now
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        // Full: refused until the oldest leaves (1.4 s on time; whole seconds, rounded up), and
        // the refusal is not counted.
        let wait = try #require(try await limiter.hit("k", limit: 3, window: window))
        #expect((1...2).contains(wait))
        #expect(try await limiter.hit("other", limit: 3, window: window) == nil)
        // The first two leave the window; the third still counts (a fixed window would have
        // started afresh and let three through).
        try await Task.sleep(until: start + .milliseconds(3300))
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        let refused = try await limiter.hit("k", limit: 3, window: window)
        #expect(
            refused != nil || ContinuousClock.now - third >= window,
            "the third attempt left the window early (\(ContinuousClock.now - third) after it)")
    }

    @Test func theWaitIsUntilTheOldestAttemptLeaves() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let limiter = RedisRateLimiter(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        #expect(try await limiter.hit("k", limit: 1, window: .seconds(60)) == nil)
        let wait = try #require(try await limiter.hit("k", limit: 1, window: .seconds(60)))
        #expect((59...60).contains(wait))
    }
}
