import Synchronization

/// Users the push fan-out found without a push token, with the push tokens' version the
/// finding holds for (see ``ParleyCore/FanoutJob/pushTokensVersion``), so that the messages
/// of rooms where nobody has a device ask PostgreSQL nothing.
///
/// A finding answers jobs read at its version or earlier: a token registered later commits a
/// higher version, which the relay reads with the next message, and a job at a higher
/// version is asked in full (its answer replaces what was kept). Up to `capacity` users are
/// kept; when that is reached the set starts again empty, which costs one query per room.
final class TokenlessUsers: Sendable {
    private struct State {
        var version = Int64.min
        var users: Set<Int64> = []
    }
    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int = 1_000_000) {
        self.capacity = capacity
    }

    /// `users` less those known to have had no token at `version` or later.
    func possibleHolders(among users: [Int64], at version: Int64) -> [Int64] {
        state.withLock { state in
            guard version <= state.version, !state.users.isEmpty else { return users }
            return users.filter { !state.users.contains($0) }
        }
    }

    /// Keeps that of `asked`, only `holders` had a token in a query made after the relay read
    /// `version`.
    func record(asked: Set<Int64>, holders: Set<Int64>, at version: Int64) {
        state.withLock { state in
            if version > state.version {
                state = State(version: version)
            } else if version < state.version {
                // Older than what is kept: the kept finding is the newer truth.
                return
            }
            state.users.subtract(holders)
            state.users.formUnion(asked.subtracting(holders))
            if state.users.count > capacity { state.users = [] }
        }
    }
}
