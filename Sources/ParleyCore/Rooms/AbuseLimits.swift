/// A token bucket's size and refill: `burst` at once, then `perSecond`.
public struct RateBucket: Sendable, Equatable {
    public var perSecond: Double
    public var burst: Int

    public init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = burst
    }

    /// `count` an hour, all of them at once if need be.
    public static func perHour(_ count: Int) -> RateBucket { RateBucket(perSecond: Double(count) / 3600, burst: count) }
    /// `count` a day, all of them at once if need be.
    public static func perDay(_ count: Int) -> RateBucket {
        RateBucket(perSecond: Double(count) / 86_400, burst: count)
    }
}

/// The limits against abuse in rooms, per user (`PARLEY_LIMIT_*`).
public struct AbuseLimits: Sendable, Equatable {
    /// Messages, REST and `chat-in` together.
    public var messages: RateBucket
    /// A bot's messages (its key's sends and its `chat-in`): bots answer many people at once.
    public var botMessages: RateBucket
    /// Multiparty rooms created.
    public var roomsPerHour: Int
    /// Users one request may add (a new room's members); more is refused before any is looked up.
    public var membersPerRequest: Int
    /// Users added to rooms, in all.
    public var membersPerHour: Int
    /// Uploads started.
    public var uploadsPerDay: Int
    /// Bytes of a user's uploads kept at once (413 `quota-exceeded` beyond).
    public var storageQuotaBytes: Int64

    public init(
        messages: RateBucket = RateBucket(perSecond: 10, burst: 30), roomsPerHour: Int = 20,
        membersPerRequest: Int = 1_000, membersPerHour: Int = 2_000, uploadsPerDay: Int = 500,
        storageQuotaBytes: Int64 = 5 << 30, botMessages: RateBucket = RateBucket(perSecond: 50, burst: 100)
    ) {
        self.messages = messages
        self.botMessages = botMessages
        self.roomsPerHour = roomsPerHour
        self.membersPerRequest = membersPerRequest
        self.membersPerHour = membersPerHour
        self.uploadsPerDay = uploadsPerDay
        self.storageQuotaBytes = storageQuotaBytes
    }
}

/// What may go now: the first `allowed` of what was asked; when fewer, `retryAfter` seconds
/// until the next would.
public struct Allowance: Sendable, Equatable {
    public let allowed: Int
    public let retryAfter: Int

    public init(allowed: Int, retryAfter: Int) {
        self.allowed = allowed
        self.retryAfter = retryAfter
    }
}

/// Token buckets shared by every process (Redis), one per key.
public protocol TokenBuckets: Sendable {
    /// Takes up to `counts[key]` tokens from each key's bucket of this size, in one step.
    func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance]
}

extension ParleyError {
    /// Too many messages: 429 with `Retry-After`, or `message-rejected` with `retryAfter`.
    public static func tooMany(_ what: String, retryAfter: Int) -> ParleyError {
        var error = ParleyError(.rateLimited, "Too many \(what); try again in \(retryAfter) s.")
        error.retryAfter = retryAfter
        return error
    }
}
