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
    ///
    /// - Parameter due: when the batch closes: with fewer than `limit` in hand before then,
    ///   the reader waits until `due` and takes what came meanwhile too (nil: at once). The
    ///   wait is not cut short by a full queue or by ``finish()``: `due` bounds it.
    public func next(upTo limit: Int, gatheringUntil due: ContinuousClock.Instant? = nil) async -> [Element]? {
        guard var batch = await first(upTo: limit) else { return nil }
        if let due, batch.count < limit {
            // A deadline, not `Task.sleep`: a busy lane waits here once per commit, and each
            // libdispatch timer cost the worker its manager thread's wake-up as well.
            await Deadlines.shared.sleep(until: due)
            batch += taken(upTo: limit - batch.count)
        }
        return batch
    }

    private func first(upTo limit: Int) async -> [Element]? {
        while true {
            let batch = taken(upTo: limit)
            if !batch.isEmpty { return batch }
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

    /// The oldest elements queued now, at most `limit`.
    private func taken(upTo limit: Int) -> [Element] {
        state.withLock { state in
            let count = min(limit, state.items.count)
            defer { state.items.removeFirst(count) }
            return Array(state.items.prefix(count))
        }
    }
}
