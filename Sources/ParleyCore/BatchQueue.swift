import Synchronization

/// A queue whose one reader takes everything waiting at once (up to a bound): how an
/// ingest lane turns a burst of input into one batch. Appending never waits.
public final class BatchQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var finished = false
        var reader: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    public func append(_ element: Element) {
        let reader = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.items.append(element)
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume()
    }

    /// Drops what no reader has taken yet; returns how many.
    @discardableResult
    public func removeAll() -> Int {
        state.withLock { state in
            defer { state.items.removeAll() }
            return state.items.count
        }
    }

    /// No more elements will come; the reader still gets those already queued.
    public func finish() {
        let reader = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume()
    }

    /// The oldest elements, at most `limit`, waiting for the first; nil once finished and empty.
    public func next(upTo limit: Int) async -> [Element]? {
        while true {
            let batch = state.withLock { state -> [Element]? in
                guard !state.items.isEmpty else { return nil }
                let count = min(limit, state.items.count)
                let taken = Array(state.items.prefix(count))
                state.items.removeFirst(count)
                return taken
            }
            if let batch { return batch }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if !state.items.isEmpty || state.finished { return true }
                    state.reader = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            if state.withLock({ $0.finished && $0.items.isEmpty }) { return nil }
        }
    }
}
