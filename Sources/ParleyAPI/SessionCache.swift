import Foundation
import ParleyCore
import Synchronization

/// Recently authenticated access tokens, so most requests skip the session lookup.
///
/// Revocations arrive through Redis pub/sub (and at once from this process). While the
/// subscription is down an invalidation could be missed, so the cache is bypassed until it
/// is back, and emptied when it returns.
public final class SessionCache: Sendable {
    struct Entry {
        let identity: AuthenticatedUser
        let cachedAt: ContinuousClock.Instant
    }
    struct State {
        var entries: [[UInt8]: Entry] = [:]
        var tokensBySession: [Int64: Set<[UInt8]>] = [:]
        /// Sessions revoked within the last `lifetime`: a lookup that read one of them just
        /// before its revocation must not cache it afterwards.
        var revoked: [Int64: ContinuousClock.Instant] = [:]
        var trusted = false
    }

    private let state = Mutex(State())
    let lifetime: Duration
    let capacity: Int

    public init(lifetime: Duration = .seconds(30), capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func identity(forTokenHash hash: [UInt8], now: Date = Date()) -> AuthenticatedUser? {
        state.withLock { state in
            guard state.trusted, let entry = state.entries[hash] else { return nil }
            guard ContinuousClock.now - entry.cachedAt < lifetime, entry.identity.expiresAt > now else {
                state.entries[hash] = nil
                return nil
            }
            return entry.identity
        }
    }

    func store(_ identity: AuthenticatedUser, forTokenHash hash: [UInt8]) {
        state.withLock { state in
            guard state.trusted else { return }
            if let at = state.revoked[identity.sessionID], ContinuousClock.now - at < lifetime { return }
            if state.entries.count >= capacity { state = State(trusted: true) }
            state.entries[hash] = Entry(identity: identity, cachedAt: .now)
            state.tokensBySession[identity.sessionID, default: []].insert(hash)
        }
    }

    /// Drops every cached token of these sessions.
    public func revoke(sessions: [Int64]) {
        state.withLock { state in
            let now = ContinuousClock.now
            state.revoked = state.revoked.filter { now - $0.value < lifetime }
            for session in sessions {
                state.revoked[session] = now
                for hash in state.tokensBySession.removeValue(forKey: session) ?? [] { state.entries[hash] = nil }
            }
        }
    }

    /// Whether revocations are being heard; entering or leaving the trusted state empties it.
    public func setTrusted(_ trusted: Bool) {
        state.withLock { state in state = State(trusted: trusted) }
    }

    /// A revocation message from the bus: comma-separated session ids.
    public func revoke(message: String) {
        revoke(sessions: message.split(separator: ",").compactMap { Int64($0) })
    }
}
