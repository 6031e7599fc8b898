import Synchronization
import Testing

@testable import ParleyRuntime

/// The deadlines thread behind every timeout of the message path: each action runs once, at
/// or after its deadline, in deadline order; a cancelled one never runs.
struct DeadlinesTests {
    final class Record: Sendable {
        let fired = Mutex<[String]>([])
        func add(_ name: String) { fired.withLock { $0.append(name) } }
        var names: [String] { fired.withLock { $0 } }

        func wait(for count: Int, within limit: Duration = .seconds(5)) async {
            let deadline = ContinuousClock.now + limit
            while names.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    @Test func actionsRunInDeadlineOrderEvenWhenAnEarlierOneIsAddedLater() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let record = Record()
        let started = ContinuousClock.now
        // The thread is asleep until the 400 ms deadline when the earlier ones arrive.
        deadlines.after(.milliseconds(400)) { record.add("late") }
        try? await Task.sleep(for: .milliseconds(20))
        deadlines.after(.milliseconds(150)) { record.add("middle") }
        deadlines.after(.milliseconds(50)) { record.add("early") }
        await record.wait(for: 3)
        #expect(record.names == ["early", "middle", "late"])
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        #expect(deadlines.pendingCount == 0)
    }

    @Test func aSleepLastsItsDelayAndNoLonger() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let start = ContinuousClock.now
        await deadlines.sleep(for: .milliseconds(50))
        let slept = ContinuousClock.now - start
        #expect(slept >= .milliseconds(50) && slept < .seconds(2), "slept \(slept)")
    }

    @Test func aSleepUntilAnInstantEndsThereAndAPastInstantDoesNotWait() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let due = ContinuousClock.now + .milliseconds(50)
        await deadlines.sleep(until: due)
        let late = ContinuousClock.now - due
        #expect(late >= .zero && late < .seconds(2), "woke \(late) after the instant")
        // A past instant returns at once, without a deadline on the thread.
        let start = ContinuousClock.now
        await deadlines.sleep(until: start - .seconds(1))
        #expect(ContinuousClock.now - start < .milliseconds(500))
        #expect(deadlines.pendingCount == 0)
    }

    @Test func aCancelledDeadlineNeverRuns() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let record = Record()
        let cancelled = deadlines.after(.milliseconds(50)) { record.add("cancelled") }
        deadlines.after(.milliseconds(100)) { record.add("kept") }
        deadlines.cancel(cancelled)
        await record.wait(for: 1)
        try? await Task.sleep(for: .milliseconds(100))
        #expect(record.names == ["kept"])
        // Cancelling once it ran is harmless.
        deadlines.cancel(cancelled)
    }

    @Test func manyCancelledDeadlinesLeaveNothingPending() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let record = Record()
        for _ in 0..<5_000 { deadlines.cancel(deadlines.after(.seconds(60)) { record.add("never") }) }
        deadlines.after(.milliseconds(10)) { record.add("last") }
        await record.wait(for: 1)
        #expect(record.names == ["last"])
        #expect(deadlines.pendingCount == 0)
        #expect(deadlines.heapCount < 5_000, "cancelled entries are dropped from the heap")
    }

    @Test func aRepeatingCheckRunsUntilItSaysStopOrIsStopped() async {
        let deadlines = Deadlines(name: "test-deadlines")
        let record = Record()
        let count = Mutex(0)
        _ = deadlines.every(.milliseconds(10)) {
            record.add("tick")
            return count.withLock { count in
                count += 1
                return count < 3
            }
        }
        await record.wait(for: 3)
        try? await Task.sleep(for: .milliseconds(100))
        #expect(record.names.count == 3)

        let stopped = Record()
        let watch = deadlines.every(.milliseconds(10)) {
            stopped.add("tick")
            return true
        }
        // The thread slept with no deadline at all when this one came.
        await stopped.wait(for: 2)
        #expect(stopped.names.count >= 2)
        watch.stop()
        let afterStop = stopped.names.count
        try? await Task.sleep(for: .milliseconds(100))
        #expect(stopped.names.count <= afterStop + 1, "a check already running may finish; none starts after")
    }
}

/// The relay's wake-up: a signal wakes the waiter (or the next wait, once); a timeout ends
/// only its own wait.
struct WakeSignalTests {
    @Test func aWaitEndsAtItsTimeoutAndLeavesNoSignalBehind() async {
        let signal = WakeSignal()
        let first = ContinuousClock.now
        await signal.wait(upTo: .milliseconds(30))
        #expect(ContinuousClock.now - first >= .milliseconds(30))
        let second = ContinuousClock.now
        await signal.wait(upTo: .milliseconds(200))
        #expect(ContinuousClock.now - second >= .milliseconds(200), "the first wait's timeout woke the second")
    }

    @Test func aSignalWakesTheWaiterAndOneBeforeAWaitIsKeptOnce() async {
        let signal = WakeSignal()
        signal.signal()
        signal.signal()
        let kept = ContinuousClock.now
        await signal.wait(upTo: .seconds(5))
        #expect(ContinuousClock.now - kept < .seconds(1))
        let waiter = Task {
            let started = ContinuousClock.now
            await signal.wait(upTo: .seconds(5))
            return ContinuousClock.now - started
        }
        try? await Task.sleep(for: .milliseconds(50))
        signal.signal()
        #expect(await waiter.value < .seconds(2))
    }
}
