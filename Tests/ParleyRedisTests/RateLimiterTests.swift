import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyRedis

/// Attempts count for exactly one window after they were made, across instances.
struct RateLimiterTests {
    @Test func attemptsLeaveTheWindowOneByOne() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let limiter = RedisRateLimiter(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        let window = Duration.milliseconds(1500)
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        try await Task.sleep(for: .milliseconds(800))
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        // Full: refused, and the refusal is not counted.
        #expect(try await limiter.hit("k", limit: 3, window: window) == 1)
        #expect(try await limiter.hit("other", limit: 3, window: window) == nil)
        // The first two leave the window; the third still counts (a fixed window would have
        // started afresh and let three through).
        try await Task.sleep(for: .milliseconds(900))
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        #expect(try await limiter.hit("k", limit: 3, window: window) == nil)
        #expect(try await limiter.hit("k", limit: 3, window: window) != nil)
    }

    @Test func theWaitIsUntilTheOldestAttemptLeaves() async throws {
        let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
        let limiter = RedisRateLimiter(pool: pool, namespace: "test-\(UUID().uuidString.prefix(8))")
        #expect(try await limiter.hit("k", limit: 1, window: .seconds(60)) == nil)
        let wait = try #require(try await limiter.hit("k", limit: 1, window: .seconds(60)))
        #expect((59...60).contains(wait))
    }
}
