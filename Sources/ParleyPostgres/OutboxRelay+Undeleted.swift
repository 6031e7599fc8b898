import Synchronization

extension OutboxRelay {
    /// The rows the relay has published and handed on but not deleted yet.
    ///
    /// Deleting rows fires the outbox's statement trigger, which indexes the published
    /// messages' words. Deleting with every batch (one message each at chat rates) paid the
    /// `DELETE`'s and the trigger's set-up every time: a third of the relay's PostgreSQL time
    /// at 40 messages/s. So rows wait until ``countLimit`` of them have gathered or the oldest
    /// has waited ``delay``, and then go with the next read. Reads skip them until then.
    ///
    /// They outlive a failed stint of the relay (Redis down, say): its retry skips them too,
    /// and so finds its unqueued batch first (``Unqueued``).
    final class Undeleted: Sendable {
        static let countLimit = 64
        static let delay: Duration = .milliseconds(250)

        private struct State {
            var ids: [Int64] = []
            /// When the oldest was published.
            var since: ContinuousClock.Instant?
        }
        private let state = Mutex(State())

        var ids: [Int64] { state.withLock { $0.ids } }

        func add(_ ids: [Int64], at now: ContinuousClock.Instant) {
            guard !ids.isEmpty else { return }
            state.withLock { state in
                state.ids += ids
                if state.since == nil { state.since = now }
            }
        }

        func removeAll() { state.withLock { $0 = State() } }

        /// Whether the next read deletes them.
        func isDue(at now: ContinuousClock.Instant) -> Bool {
            state.withLock { state in
                guard let since = state.since else { return false }
                return state.ids.count >= Self.countLimit || now - since >= Self.delay
            }
        }

        /// How long the relay waits for a commit before a read of its own: until the rows are
        /// due, or a second with none.
        func wait(at now: ContinuousClock.Instant) -> Duration {
            state.withLock { state in
                guard let since = state.since else { return .seconds(1) }
                return max(.zero, since + Self.delay - now)
            }
        }
    }
}
