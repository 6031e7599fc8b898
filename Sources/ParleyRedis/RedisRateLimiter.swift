import Foundation
import ParleyCore

/// Fixed-window attempt counting in Redis, shared by every API instance.
public struct RedisRateLimiter: RateLimiter {
    let pool: RedisConnectionPool
    /// Keeps separate deployments (or test runs) sharing one Redis apart.
    let namespace: String

    public init(pool: RedisConnectionPool, namespace: String = "parley") {
        self.pool = pool
        self.namespace = namespace
    }

    /// Counts and sets the window's expiry in one atomic step.
    static let script = """
        local n = redis.call('INCR', KEYS[1])
        if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
        return n
        """

    public func hit(_ key: String, limit: Int, window: Duration) async throws -> Int? {
        let seconds = max(1, Int(window.components.seconds))
        let now = Int(Date().timeIntervalSince1970)
        let windowStart = now - now % seconds
        let count =
            try await pool.send(
                "EVAL", Self.script, "1", "\(namespace):ratelimit:\(key):\(windowStart)", String(seconds)
            ).integer ?? 0
        guard count > limit else { return nil }
        return max(1, windowStart + seconds - now)
    }
}

/// Announces revoked sessions to every API instance over Redis pub/sub.
public struct RedisSessionRevocationBus: SessionRevocationBus {
    public static let channel = "parley:sessions:revoked"
    let pool: RedisConnectionPool

    public init(pool: RedisConnectionPool) { self.pool = pool }

    public func publish(revokedSessions: [Int64]) async throws {
        guard !revokedSessions.isEmpty else { return }
        _ = try await pool.send("PUBLISH", Self.channel, revokedSessions.map(String.init).joined(separator: ","))
    }
}
