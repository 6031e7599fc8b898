import Synchronization

/// Token buckets that take a busy key's tokens from the shared store a little ahead: with a
/// key's tokens, a process takes as many more as the key asked for in this process during the
/// last `window`, and spends them locally until the window ends. A user sending hundreds of
/// messages a second costs the store one request a window instead of one per batch; a user
/// sending now and then asks as before (<doc:AbuseLimits>).
///
/// What a lease holds when its window ends is dropped, not given back: a key is charged at
/// most its own last window's demand more than it spent, and never allowed more than the
/// store granted.
public final class LeasedTokenBuckets: TokenBuckets {
    let store: any TokenBuckets
    let window: Duration
    /// At most this share of a bucket's burst is leased at once.
    let burstShare = 4
    private let now: @Sendable () -> ContinuousClock.Instant
    private let leases = Mutex<[String: Lease]>([:])

    struct Lease {
        var tokens = 0
        var until: ContinuousClock.Instant
        /// Tokens asked in the current window, and in the one before it.
        var demand = 0
        var lastDemand = 0
        var windowStart: ContinuousClock.Instant
    }

    public init(
        store: any TokenBuckets, window: Duration = .milliseconds(250),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.store = store
        self.window = window
        self.now = now
    }

    public func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
        let started = now()
        var answered: [String: Allowance] = [:]
        // Per key not answered from its lease: what the lease gave, what is still needed, and
        // how many to lease ahead.
        var asks: [String: (given: Int, needed: Int, ahead: Int)] = [:]
        leases.withLock { leases in
            if leases.count > 10_000 { leases = leases.filter { started - $0.value.windowStart < window * 2 } }
            for (key, asked) in counts {
                var lease = leases[key] ?? Lease(until: started, windowStart: started)
                if started - lease.windowStart >= window {
                    lease.lastDemand = started - lease.windowStart < window * 2 ? lease.demand : 0
                    lease.demand = 0
                    lease.windowStart = started
                }
                lease.demand += asked
                let given = started < lease.until ? min(lease.tokens, asked) : 0
                lease.tokens = started < lease.until ? lease.tokens - given : 0
                if given == asked {
                    answered[key] = Allowance(allowed: asked, retryAfter: 0)
                } else {
                    asks[key] = (given, asked - given, min(lease.lastDemand, bucket.burst / burstShare))
                }
                leases[key] = lease
            }
        }
        guard !asks.isEmpty else { return answered }
        let taken = try await store.take(asks.mapValues { $0.needed + $0.ahead }, from: bucket)
        leases.withLock { leases in
            for (key, ask) in asks {
                // No answer for a key: the store's caller decides (RoomService lets it go).
                guard let allowance = taken[key] else { continue }
                let granted = min(ask.needed, allowance.allowed)
                answered[key] = Allowance(allowed: ask.given + granted, retryAfter: allowance.retryAfter)
                let ahead = allowance.allowed - granted
                if ahead > 0, var lease = leases[key] {
                    lease.tokens += ahead
                    lease.until = started + window
                    leases[key] = lease
                }
            }
        }
        return answered
    }
}
