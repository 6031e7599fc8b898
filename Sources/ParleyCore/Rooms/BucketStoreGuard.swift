import ParleyRuntime
import Synchronization

/// Keeps the limits against abuse from slowing the chat while their store (Redis) is away or
/// slow: one ask waits at most `patience`, and after a failure the store is not asked again
/// for `pause`, so every send in between goes at once (fails open) instead of each waiting
/// for a connection or a command timeout.
final class BucketStoreGuard: Sendable {
    let patience: Duration
    let pause: Duration
    private let askAgainAt = Mutex<ContinuousClock.Instant?>(nil)

    /// What a Redis answer takes at worst when Redis is well.
    static let defaultPatience = Duration.milliseconds(250)

    init(patience: Duration = defaultPatience, pause: Duration = .seconds(1)) {
        self.patience = patience
        self.pause = pause
    }

    /// What `take` answers in time; nil while paused or when it failed (and then pauses).
    func ask<Answer: Sendable>(_ take: @escaping @Sendable () async throws -> Answer) async -> Answer? {
        let now = ContinuousClock.now
        if let askAgainAt = askAgainAt.withLock({ $0 }), now < askAgainAt { return nil }
        do {
            return try await withTimeout(patience, operation: take)
        } catch {
            askAgainAt.withLock { $0 = ContinuousClock.now + pause }
            return nil
        }
    }
}
