import Synchronization

/// Which senders are bots, for the message budget (bots have their own:
/// ``AbuseLimits/botMessages``). Each process keeps the ids, read at most every ``refresh``
/// (a new bot spends a user's budget until then); while they cannot be read, the last ones hold.
public final class BotRoster: Sendable {
    let load: @Sendable () async throws -> Set<Int64>
    let refresh: Duration
    private let known = Mutex<(ids: Set<Int64>, readAt: ContinuousClock.Instant?)>(([], nil))

    public init(refresh: Duration = .seconds(10), load: @escaping @Sendable () async throws -> Set<Int64>) {
        self.refresh = refresh
        self.load = load
    }

    /// The bots among `userIDs`.
    public func bots(among userIDs: Set<Int64>) async -> Set<Int64> {
        let now = ContinuousClock.now
        var (ids, readAt) = known.withLock { $0 }
        if readAt.map({ now - $0 >= refresh }) ?? true {
            // Read again later whether or not this read succeeds: Postgres away is not asked per batch.
            known.withLock { $0.readAt = now }
            if let fresh = try? await load() {
                ids = fresh
                known.withLock { $0.ids = fresh }
            }
        }
        return ids.intersection(userIDs)
    }
}
