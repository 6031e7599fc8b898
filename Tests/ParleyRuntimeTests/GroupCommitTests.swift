import ParleyRuntime
import Synchronization
import Testing

/// Group commit over a store that records its batches: sends share transactions, and each
/// still gets its own outcome.
struct GroupCommitTests {
    struct Refused: Error, Equatable { let item: Int }

    /// A store that records each batch, holds the first until `release` (or 5 s), and
    /// refuses item 7 alone.
    final class RecordingStore: Sendable {
        let batches = Mutex<[[Int]]>([])
        let release = WakeSignal()

        func store(_ items: [Int]) async -> [Result<Int, any Error>] {
            let first = batches.withLock { batches in
                batches.append(items)
                return batches.count == 1
            }
            if first { await release.wait(upTo: .seconds(5)) }
            return items.map { $0 == 7 ? .failure(Refused(item: 7)) : .success($0 * 10) }
        }
    }

    /// Submits `count` items at once while the first batch is held, then releases it.
    func submitTogether(_ count: Int, to commit: GroupCommit<Int, Int>, store: RecordingStore) async
        -> [Int: Result<Int, Refused>]
    {
        let started = Counter()
        return await withTaskGroup(of: (Int, Result<Int, Refused>).self) { group in
            for item in 0..<count {
                group.addTask {
                    started.value.add(1, ordering: .relaxed)
                    do {
                        return (item, .success(try await commit.submit(item, key: 1)))
                    } catch {
                        return (item, .failure(error as? Refused ?? Refused(item: -1)))
                    }
                }
            }
            // Everyone has started (and so queued) before the first batch commits.
            for _ in 0..<500 where started.value.load(ordering: .relaxed) < count {
                try? await Task.sleep(for: .milliseconds(10))
            }
            try? await Task.sleep(for: .milliseconds(100))
            store.release.signal()
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    @Test func concurrentSubmissionsShareBatchesAndEachGetsItsOwnOutcome() async {
        let store = RecordingStore()
        let commit = GroupCommit<Int, Int>(lanes: 4, maxBatch: 64, window: .zero) { await store.store($0) }
        let outcomes = await submitTogether(50, to: commit, store: store)
        for item in 0..<50 {
            #expect(outcomes[item] == (item == 7 ? .failure(Refused(item: 7)) : .success(item * 10)))
        }
        let batches = store.batches.withLock { $0 }
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<50))
        // One held batch, then (nearly) everyone else together.
        #expect(batches.count < 10)
    }

    @Test func aBatchHoldsAtMostMaxBatchItems() async {
        let store = RecordingStore()
        let commit = GroupCommit<Int, Int>(lanes: 1, maxBatch: 4, window: .zero) { await store.store($0) }
        _ = await submitTogether(20, to: commit, store: store)
        let batches = store.batches.withLock { $0 }
        #expect(batches.allSatisfy { $0.count <= 4 })
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<20))
    }

    @Test func aStoreThatThrowsFailsItsOwnBatchOnly() async throws {
        struct Down: Error {}
        let calls = Counter()
        let commit = GroupCommit<Int, Int>(lanes: 1, maxBatch: 8, window: .zero) { items in
            if calls.value.add(1, ordering: .relaxed).newValue == 1 { throw Down() }
            return items.map { .success($0) }
        }
        await #expect(throws: Down.self) { try await commit.submit(1, key: 0) }
        #expect(try await commit.submit(2, key: 0) == 2)
    }

    @Test func aCancelledLeaderStillCommitsItsBatch() async throws {
        let entered = WakeSignal()
        let release = WakeSignal()
        let commit = GroupCommit<Int, Int>(lanes: 1, maxBatch: 8, window: .zero) { items in
            entered.signal()
            await release.wait(upTo: .seconds(5))
            // The store runs in a task of its own: the leader's cancellation does not reach it.
            return items.map { Task.isCancelled ? .failure(CancellationError()) : .success($0) }
        }
        let leader = Task { try await commit.submit(1, key: 0) }
        await entered.wait(upTo: .seconds(5))
        leader.cancel()
        release.signal()
        #expect(try await leader.value == 1)
    }

    @Test func differentLanesCommitInParallel() async throws {
        let inside = Counter()
        let most = Counter()
        let commit = GroupCommit<Int, Int>(lanes: 2, maxBatch: 8, window: .zero) { items in
            let now = inside.value.add(1, ordering: .relaxed).newValue
            most.value.max(now, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(200))
            inside.value.subtract(1, ordering: .relaxed)
            return items.map { .success($0) }
        }
        async let first = commit.submit(0, key: 0)
        async let second = commit.submit(1, key: 1)
        #expect(try await [first, second] == [0, 1])
        #expect(most.value.load(ordering: .relaxed) == 2)
    }

    /// Under load a lane's batches start `interval` apart and what arrives meanwhile shares
    /// the next; a lane whose last batch began longer ago stores at once.
    @Test func aBusyLaneStartsItsBatchesAnIntervalApartAndAnIdleOneAtOnce() async throws {
        let starts = Mutex<[(items: [Int], at: ContinuousClock.Instant)]>([])
        let commit = GroupCommit<Int, Int>(lanes: 1, maxBatch: 64, window: .zero, interval: .milliseconds(300)) {
            items in
            starts.withLock { $0.append((items, .now)) }
            return items.map { .success($0) }
        }
        let begun = ContinuousClock.now
        #expect(try await commit.submit(0, key: 1) == 0)
        #expect(ContinuousClock.now - begun < .milliseconds(150), "the first send waited")
        let arrivals = (1...4).map { item in
            Task {
                try await Task.sleep(for: .milliseconds(40 * item))
                return try await commit.submit(item, key: 1)
            }
        }
        for (item, arrival) in zip(1...4, arrivals) { #expect(try await arrival.value == item) }
        try await Task.sleep(for: .milliseconds(400))
        let idle = ContinuousClock.now
        #expect(try await commit.submit(5, key: 1) == 5)
        #expect(ContinuousClock.now - idle < .milliseconds(150), "a send to a lane idle past the interval waited")
        let batches = starts.withLock { $0 }
        #expect(batches.map(\.items) == [[0], [1, 2, 3, 4], [5]])
        if batches.count == 3 {
            // The lane counts from its own start, a moment before the store records the first
            // batch (a CI run saw 297 ms): 20 ms of room, far from a batch that did not wait (40 ms).
            #expect(batches[1].at - batches[0].at >= .milliseconds(280))
        }
    }
}

/// A shared count (an `Atomic` cannot be captured by the tasks that share it).
final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

struct BatchQueueTests {
    @Test func aReaderTakesWhatIsQueuedInOrderUpToItsLimit() async {
        let queue = BatchQueue<Int>()
        for item in 1...5 { queue.append(item) }
        #expect(await queue.next(upTo: 3) == [1, 2, 3])
        #expect(await queue.next(upTo: 3) == [4, 5])
        queue.append(6)
        queue.finish()
        #expect(await queue.next(upTo: 3) == [6])
        #expect(await queue.next(upTo: 3) == nil)
    }

    @Test func aWaitingReaderWakesOnAppend() async {
        let queue = BatchQueue<Int>()
        async let batch = queue.next(upTo: 10)
        try? await Task.sleep(for: .milliseconds(50))
        queue.append(1)
        #expect(await batch == [1])
    }

    /// Runs `action` once `delay` has passed, while the test waits on the queue.
    private func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(for: delay)
            action()
        }
    }

    @Test func aReaderGatheringUntilADueTimeTakesWhatArrivesMeanwhileUpToItsLimit() async {
        let queue = BatchQueue<Int>()
        queue.append(1)
        let appending = after(.milliseconds(50)) { for item in 2...4 { queue.append(item) } }
        #expect(await queue.next(upTo: 2, gatheringUntil: .now + .milliseconds(500)) == [1, 2])
        #expect(await queue.next(upTo: 2) == [3, 4])
        await appending.value
    }

    @Test func aQueueFinishedWhileItsReaderGathersGivesItsBatchThenNothing() async {
        let queue = BatchQueue<Int>()
        queue.append(1)
        let finishing = after(.milliseconds(50)) { queue.finish() }
        #expect(await queue.next(upTo: 10, gatheringUntil: .now + .milliseconds(300)) == [1])
        #expect(await queue.next(upTo: 10, gatheringUntil: .now + .milliseconds(300)) == nil)
        await finishing.value
    }

    @Test func aDueTimeInThePastOrAFullBatchDoesNotWait() async {
        let queue = BatchQueue<Int>()
        queue.append(1)
        let appending = after(.milliseconds(200)) { queue.append(2) }
        // Nothing waited for: what comes 200 ms later is the next batch's.
        #expect(await queue.next(upTo: 10, gatheringUntil: .now - .seconds(1)) == [1])
        await appending.value
        queue.append(3)
        let started = ContinuousClock.now
        // Full at once: the 10 s are not waited for.
        #expect(await queue.next(upTo: 2, gatheringUntil: .now + .seconds(10)) == [2, 3])
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
