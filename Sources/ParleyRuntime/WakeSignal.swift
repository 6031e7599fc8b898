import Synchronization

/// Wakes one waiter early; signals that arrive while nobody waits are kept (once).
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Which wait `waiter` belongs to: a timeout of an earlier wait must not end a later one.
        var wait: UInt64 = 0
        /// A wait whose deadline passed before it began waiting.
        var expired: UInt64 = 0
    }
    private let state = Mutex(State())

    public init() {}

    public func signal() { wake(endingWait: nil) }

    /// Resumes the waiter; with nobody waiting, leaves a mark for the next wait to find: a
    /// pending signal, or (for `wait`'s timeout) that wait's expiry. A timeout of an earlier
    /// wait does nothing.
    private func wake(endingWait wait: UInt64?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let wait, state.wait != wait { return nil }
            guard let waiter = state.waiter else {
                if let wait { state.expired = wait } else { state.pending = true }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a signal (or one that came before) or after `timeout`.
    public func wait(upTo timeout: Duration) async {
        let wait = state.withLock { state -> UInt64 in
            state.wait &+= 1
            return state.wait
        }
        // A deadline rather than a sleeping task (see ``Deadlines``); it ends only this wait
        // and leaves no signal behind for the next.
        let deadline = Deadlines.shared.after(timeout) { [self] in wake(endingWait: wait) }
        defer { Deadlines.shared.cancel(deadline) }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                if state.expired == wait { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
