import Synchronization

/// Token buckets that take a key's tokens from the shared store a little ahead and spend them
/// locally (<doc:AbuseLimits>):
/// - **A busy key**: with its tokens, a process takes as many more as the key asked for in this
///   process during the last `window`, and spends them until the window ends. A user sending
///   hundreds of messages a second costs the store one request a window instead of one per batch.
/// - **A key asking now and then** (with an `idleLease`): as many more as its bucket refills
///   in that lease, kept for the lease. A user sending a message every few seconds costs the
///   store one request a lease instead of one per message: at a low rate that request is a
///   round trip of its own, a tenth of the message's CPU.
///
/// A lease is at most a quarter of a bucket's burst, and of concurrent asks of a key only the
/// first leases for idleness. What a lease holds when it ends is dropped, not given back: a key
/// is charged at most its leases beyond what it spent, and never allowed more than the store
/// granted.
public final class LeasedTokenBuckets: TokenBuckets {
    let store: any TokenBuckets
    let window: Duration
    let idleLease: Duration?
    /// At most this share of a bucket's burst is leased at once.
    let burstShare = 4
    private let now: @Sendable () -> ContinuousClock.Instant
    private let leases = Mutex<Leases>(Leases())

    /// How long a key asking now and then keeps what it leased, where a process leases for
    /// such keys: a person's messages come a few seconds apart.
    public static let defaultIdleLease = Duration.seconds(10)

    struct Lease {
        var tokens = 0
        var until: ContinuousClock.Instant
        /// Tokens asked in the current window, and in the one before it.
        var demand = 0
        var lastDemand = 0
        var windowStart: ContinuousClock.Instant
        /// Asks of the store for this key not answered yet: only the first leases for idleness,
        /// so that the concurrent asks of a quiet key do not each lease a quarter of its bucket.
        var asking = 0
    }

    struct Leases {
        var byKey: [String: Lease] = [:]
        /// Past this count, leases ended long ago are forgotten (then twice the count kept).
        var pruneAt = 10_000
    }

    /// - Parameters:
    ///   - window: how long a busy key's demand is measured and its lease kept.
    ///   - idleLease: how long a key asking now and then keeps what it leased; nil: such a key
    ///     takes exactly what it asks.
    public init(
        store: any TokenBuckets, window: Duration = .milliseconds(250), idleLease: Duration? = nil,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.store = store
        self.window = window
        self.idleLease = idleLease
        self.now = now
    }

    /// What a key asking now and then leases from `bucket`: what it refills in the lease, at
    /// most a quarter of its burst (nothing for rooms an hour or uploads a day; members an
    /// hour, 2,000 by default, lease five).
    func idleAhead(_ bucket: RateBucket) -> Int {
        guard let idleLease else { return 0 }
        let refill = bucket.perSecond * (idleLease / .seconds(1))
        return min(bucket.burst / burstShare, Int(min(refill, Double(bucket.burst))))
    }

    public func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
        let started = now()
        var answered: [String: Allowance] = [:]
        // Per key not answered from its lease: what the lease gave, what is still needed, how
        // many to lease ahead and until when.
        var asks: [String: (given: Int, needed: Int, ahead: Int, until: ContinuousClock.Instant)] = [:]
        let idle = (ahead: idleAhead(bucket), lease: idleLease ?? window)
        leases.withLock { leases in
            leases.prune(at: started, window: window)
            for (key, asked) in counts {
                var lease = leases.byKey[key] ?? Lease(until: started, windowStart: started)
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
                    let busy = min(lease.lastDemand, bucket.burst / burstShare)
                    let leasesIdle = lease.asking == 0 && idle.ahead > busy
                    asks[key] = (
                        given, asked - given, leasesIdle ? idle.ahead : busy,
                        started + (leasesIdle ? idle.lease : window)
                    )
                    lease.asking += 1
                }
                leases.byKey[key] = lease
            }
        }
        guard !asks.isEmpty else { return answered }
        let taken: [String: Allowance]
        do {
            taken = try await store.take(asks.mapValues { $0.needed + $0.ahead }, from: bucket)
        } catch {
            leases.withLock { leases in
                for key in asks.keys { leases.byKey[key]?.asking -= 1 }
            }
            throw error
        }
        leases.withLock { leases in
            for (key, ask) in asks {
                leases.byKey[key]?.asking -= 1
                // No answer for a key: the store's caller decides (RoomService lets it go).
                guard let allowance = taken[key] else { continue }
                let granted = min(ask.needed, allowance.allowed)
                answered[key] = Allowance(allowed: ask.given + granted, retryAfter: allowance.retryAfter)
                let ahead = allowance.allowed - granted
                if ahead > 0, var lease = leases.byKey[key] {
                    lease.tokens += ahead
                    lease.until = max(lease.until, ask.until)
                    leases.byKey[key] = lease
                }
            }
        }
        return answered
    }
}

extension LeasedTokenBuckets.Leases {
    /// Forgets the keys whose lease has ended and whose demand no longer counts, once there are
    /// many: amortised, so a server with more active keys than the bound does not filter them
    /// on every take.
    mutating func prune(at now: ContinuousClock.Instant, window: Duration) {
        guard byKey.count > pruneAt else { return }
        byKey = byKey.filter { now - $0.value.windowStart < window * 2 || now < $0.value.until || $0.value.asking > 0 }
        pruneAt = max(pruneAt, 2 * byKey.count)
    }
}
