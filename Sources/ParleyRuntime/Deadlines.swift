import Foundation
import Synchronization

/// Deadlines for the message path's timeouts, kept by one thread of their own.
///
/// Every statement, MQTT acknowledgement and relay wait is bounded in time, and almost
/// none reaches its bound. A `Task.sleep` per bound costs a task and a libdispatch timer,
/// armed and cancelled on libdispatch's manager thread: on the message path that thread
/// took 8 % of the worker's CPU, besides the context switches it caused (see
/// <doc:MessagePipelinePerformance>).
/// Here a bound is an entry in a heap under a lock; the thread sleeps until the earliest
/// deadline and is woken only when an earlier one arrives. Actions run on that thread, so
/// they must be short and must not block (resuming a continuation, cancelling a task).
public final class Deadlines: @unchecked Sendable {
    /// The process's deadlines.
    public static let shared = Deadlines(name: "parley-deadline")

    /// What ``cancel(_:)`` takes back.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    // Guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var actions: [UInt64: @Sendable () -> Void] = [:]
    /// (deadline in nanoseconds since `origin`, id); cancelled ids stay until they come up.
    private var heap = DeadlineHeap()
    private var nextID: UInt64 = 0
    /// Whether the thread sleeps, and until which deadline (nil: until woken).
    private var sleeping = false
    private var sleepingUntil: Int64?
    private var started = false
    private let name: String
    private let origin = ContinuousClock.now

    public init(name: String) {
        self.name = name
    }

    /// Runs `action` once `delay` has passed, unless cancelled first.
    @discardableResult
    public func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) -> Token {
        let due = nanoseconds(ContinuousClock.now - origin + delay)
        condition.lock()
        nextID &+= 1
        let id = nextID
        actions[id] = action
        heap.push((due, id))
        if !started {
            started = true
            Thread.start(named: name) { [self] in run() }
        }
        // Most bounds are alike and come in order: the thread is woken only for an earlier one.
        if sleeping, sleepingUntil.map({ due < $0 }) ?? true { condition.signal() }
        // Entries cancelled long before their deadline would otherwise pile up.
        if heap.count > 1024, heap.count > 4 * actions.count { heap.keepOnly(actions) }
        condition.unlock()
        return Token(id: id)
    }

    /// Suspends the caller for `delay` (not cancellable): a short wait on the message path
    /// without `Task.sleep`'s libdispatch timer and the pool thread its resumption wakes.
    public func sleep(for delay: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            after(delay) { continuation.resume() }
        }
    }

    /// Suspends the caller until `instant` (not cancellable); returns at once if it passed.
    public func sleep(until instant: ContinuousClock.Instant) async {
        let delay = instant - .now
        if delay > .zero { await sleep(for: delay) }
    }

    /// Takes a deadline back; its action does not run. Harmless once it ran.
    public func cancel(_ token: Token) {
        condition.lock()
        actions.removeValue(forKey: token.id)
        condition.unlock()
    }

    /// Calls `check` every `interval` until it returns false or the returned watch is stopped.
    public func every(_ interval: Duration, _ check: @escaping @Sendable () -> Bool) -> RepeatingDeadline {
        let watch = RepeatingDeadline(deadlines: self)
        watch.arm(interval, check)
        return watch
    }

    /// Entries pending (for tests).
    var pendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return actions.count
    }

    /// Entries in the heap, cancelled ones included (for tests).
    var heapCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return heap.count
    }

    private func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    private func run() {
        condition.lock()
        while true {
            let now = nanoseconds(ContinuousClock.now - origin)
            var due: [@Sendable () -> Void] = []
            while let (deadline, id) = heap.first, deadline <= now {
                heap.popFirst()
                if let action = actions.removeValue(forKey: id) { due.append(action) }
            }
            if !due.isEmpty {
                condition.unlock()
                for action in due { action() }
                condition.lock()
                continue
            }
            // Most entries are cancelled long before they are due (the statement answered):
            // sleep until the earliest one still pending, not once per cancelled one.
            while let (_, id) = heap.first, actions[id] == nil { heap.popFirst() }
            sleeping = true
            sleepingUntil = heap.first?.0
            if let next = sleepingUntil {
                // At most a second at a time: the wait is on the wall clock, which may jump.
                _ = condition.wait(until: Date(timeIntervalSinceNow: min(1, Double(next - now) / 1e9)))
            } else {
                condition.wait()
            }
            sleeping = false
            sleepingUntil = nil
        }
    }
}

/// A check that runs every interval on ``Deadlines``' thread until stopped.
public final class RepeatingDeadline: Sendable {
    private let deadlines: Deadlines
    private let state = Mutex<(token: Deadlines.Token?, stopped: Bool)>((nil, false))

    fileprivate init(deadlines: Deadlines) {
        self.deadlines = deadlines
    }

    fileprivate func arm(_ interval: Duration, _ check: @escaping @Sendable () -> Bool) {
        let token = deadlines.after(interval) { [self] in
            guard !state.withLock({ $0.stopped }), check() else { return }
            arm(interval, check)
        }
        let stoppedMeanwhile = state.withLock { state -> Bool in
            state.token = token
            return state.stopped
        }
        if stoppedMeanwhile { deadlines.cancel(token) }
    }

    public func stop() {
        let token = state.withLock { state -> Deadlines.Token? in
            state.stopped = true
            return state.token
        }
        if let token { deadlines.cancel(token) }
    }
}

/// A binary min-heap of (deadline, id).
private struct DeadlineHeap {
    private var items: [(Int64, UInt64)] = []

    var count: Int { items.count }
    var first: (Int64, UInt64)? { items.first }

    mutating func push(_ item: (Int64, UInt64)) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].0 < items[parent].0 else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        siftDown(from: 0)
    }

    /// Drops the entries whose id is no longer pending.
    mutating func keepOnly<Value>(_ pending: [UInt64: Value]) {
        items.removeAll { pending[$0.1] == nil }
        for index in stride(from: items.count / 2, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].0 < items[smallest].0 { smallest = left }
            if right < items.count, items[right].0 < items[smallest].0 { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
