import Synchronization

/// Group commit: callers who submit while their lane is busy storing share its next
/// transaction, instead of each waiting for one of their own.
///
/// A caller who finds its lane idle leads: it waits `window` for company, then stores what
/// is queued (up to `maxBatch`) in one call of `store`. When that returns and more is
/// queued, the lead passes to the first caller waiting, who stores the next batch without
/// waiting further (it filled while the last one committed). A lane starts its batches at
/// least `interval` apart: under load a leader waits out the rest of it, and what arrives
/// meanwhile shares the batch (a commit's fixed cost spread over more items), while a lane
/// whose last batch began longer ago stores at once. No task runs but the callers' own and one
/// store per batch, one batch per lane is in flight, and items of one lane key keep their
/// submission order.
public final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Stores a batch; returns one outcome per item, in order. A throw fails the whole batch.
    public typealias Store = @Sendable ([Item]) async throws -> [Result<Output, any Error>]

    private enum Turn: Sendable {
        case done(Result<Output, any Error>)
        /// Store the next batch; `fresh` when the lane was idle (so wait for company first).
        case lead(fresh: Bool)
    }

    private struct Waiter: Sendable {
        let item: Item
        /// `nil` for the leader's own item: it is answered by returning, not by resuming.
        var continuation: CheckedContinuation<Turn, Never>?
    }

    private struct LaneState {
        var queue: [Waiter] = []
        var leading = false
        /// When the lane's last batch was taken.
        var lastStart: ContinuousClock.Instant?
    }

    private final class Lane: Sendable {
        let state = Mutex(LaneState())
    }

    private let lanes: [Lane]
    private let maxBatch: Int
    private let window: Duration
    private let interval: Duration
    private let store: Store

    public init(
        lanes: Int, maxBatch: Int, window: Duration, interval: Duration = .zero, store: @escaping Store
    ) {
        precondition(lanes > 0 && maxBatch > 0, "at least one lane and one item per batch")
        self.lanes = (0..<lanes).map { _ in Lane() }
        self.maxBatch = maxBatch
        self.window = window
        self.interval = interval
        self.store = store
    }

    /// Stores `item` in the next batch of the lane `key` maps to; returns its outcome.
    public func submit(_ item: Item, key: Int64) async throws -> Output {
        let lane = lanes[Int(UInt64(bitPattern: key) % UInt64(lanes.count))]
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let leads = lane.state.withLock { state -> Bool in
                if state.leading {
                    state.queue.append(Waiter(item: item, continuation: continuation))
                    return false
                }
                state.leading = true
                state.queue.append(Waiter(item: item, continuation: nil))
                return true
            }
            if leads { continuation.resume(returning: .lead(fresh: true)) }
        }
        switch turn {
        case .done(let outcome): return try outcome.get()
        case .lead(let fresh): return try await lead(lane, fresh: fresh).get()
        }
    }

    /// Stores one batch (the leader's item first in it), answers the others, passes the lead on.
    private func lead(_ lane: Lane, fresh: Bool) async -> Result<Output, any Error> {
        let due = lane.state.withLock { $0.lastStart.map { $0 + interval } }
        let now = ContinuousClock.now
        // A deadline, not `Task.sleep`: its libdispatch timer was 1.6 % of `serve`'s samples
        // under REST sends, besides the pool thread each resumption woke.
        await Deadlines.shared.sleep(until: max(fresh ? now + window : now, due ?? now))
        let batch = lane.state.withLock { state -> [Waiter] in
            state.lastStart = .now
            let count = min(maxBatch, state.queue.count)
            let taken = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            return taken
        }
        // Only a leader takes from the queue, and it leads from the queue's front.
        assert(batch.first?.continuation == nil, "the leader's own item opens its batch")
        // A closure, not `\.item`: a key path in a generic type is instantiated at each call.
        let items = batch.map { $0.item }
        // A task of its own: a leader whose request is cancelled must not cancel the others' write.
        let stored = await Task { [store] in try await store(items) }.result
        let outcomes: [Result<Output, any Error>]
        switch stored {
        case .success(let results):
            precondition(results.count == batch.count, "a store returns one outcome per item")
            outcomes = results
        case .failure(let error):
            outcomes = Array(repeating: .failure(error), count: batch.count)
        }
        for (waiter, outcome) in zip(batch, outcomes) { waiter.continuation?.resume(returning: .done(outcome)) }
        let next = lane.state.withLock { state -> CheckedContinuation<Turn, Never>? in
            guard !state.queue.isEmpty else {
                state.leading = false
                return nil
            }
            defer { state.queue[0].continuation = nil }
            return state.queue[0].continuation
        }
        next?.resume(returning: .lead(fresh: false))
        return outcomes[0]
    }
}
