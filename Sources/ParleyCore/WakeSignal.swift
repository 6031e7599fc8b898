import Synchronization

/// Wakes one waiter early; signals that arrive while nobody waits are kept (once).
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    public init() {}

    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a signal (or one that came before) or after `timeout`.
    public func wait(upTo timeout: Duration) async {
        let timer = Task {
            // A cancelled timer must not leave a signal behind for the next wait.
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.signal()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
