import Foundation
import ParleyCore

/// Sliding-window attempt counting in Redis, shared by every API instance: each allowed
/// attempt is an entry of a sorted set scored by Redis's own clock (so instances' clocks need
/// not agree), and an attempt counts for exactly `window` after it. A fixed window would let
/// twice the limit through across a window's edge.
///
/// Refused attempts are not recorded: a client that keeps trying is not locked out for longer,
/// and an attacker cannot grow a key past `limit` entries.
public struct RedisRateLimiter: RateLimiter {
    let pool: RedisConnectionPool
    /// Keeps separate deployments (or test runs) sharing one Redis apart.
    let namespace: String

    public init(pool: RedisConnectionPool, namespace: String = "parley") {
        self.pool = pool
        self.namespace = namespace
    }

    /// Forgets attempts older than the window, then records this one if the rest leave room;
    /// answers 0, or the milliseconds until the oldest attempt leaves the window. One atomic step.
    static let script = """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local window = tonumber(ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
        if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
          local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
          return math.max(1, tonumber(oldest[2]) + window - now)
        end
        redis.call('ZADD', KEYS[1], now, now .. ':' .. redis.call('INCR', KEYS[1] .. ':n'))
        redis.call('PEXPIRE', KEYS[1], window)
        redis.call('PEXPIRE', KEYS[1] .. ':n', window)
        return 0
        """

    public func hit(_ key: String, limit: Int, window: Duration) async throws -> Int? {
        let milliseconds = max(1, Int(window.milliseconds))
        let wait =
            try await pool.send(
                "EVAL", Self.script, "1", "\(namespace):ratelimit:\(key)", String(milliseconds), String(limit)
            ).integer ?? 0
        guard wait > 0 else { return nil }
        return max(1, Int((wait + 999) / 1000))
    }

    public func remember(_ key: String, for lifetime: Duration) async throws {
        _ = try await pool.send(
            "SET", "\(namespace):remembered:\(key)", "1", "EX", String(max(1, lifetime.components.seconds)))
    }

    public func remembers(_ key: String) async throws -> Bool {
        try await pool.send("EXISTS", "\(namespace):remembered:\(key)").integer == 1
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
