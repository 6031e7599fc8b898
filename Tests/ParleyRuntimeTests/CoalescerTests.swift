import Synchronization
import Testing

@testable import ParleyRuntime

/// The first value of a quiet key goes at once, later ones at most once per interval with the
/// highest kept, the last one always; a failed write is tried again with what rose meanwhile.
struct CoalescerTests {
    final class Writes: Sendable {
        let batches = Mutex<[[String: Int64]]>([])
        let failing = Mutex(false)

        func write(_ due: [(key: String, value: Int64)]) throws {
            if failing.withLock({ $0 }) { throw Failure() }
            batches.withLock { $0.append(Dictionary(uniqueKeysWithValues: due.map { ($0.key, $0.value) })) }
        }

        struct Failure: Error {}
    }

    @Test func aQuietKeyGoesAtOnceABusyOneOncePerIntervalWithItsHighestValue() async throws {
        let writes = Writes()
        let coalescer = Coalescer<String>(interval: .milliseconds(300)) { try writes.write($0) }
        let running = Task { try await coalescer.run() }
        coalescer.submit("a", 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(writes.batches.withLock { $0 } == [["a": 1]])
        // Within the interval: held, the highest kept (a lower one does not win).
        for value: Int64 in [5, 9, 7] { coalescer.submit("a", value) }
        coalescer.submit("b", 3)
        try await Task.sleep(for: .milliseconds(100))
        #expect(writes.batches.withLock { $0 } == [["a": 1], ["b": 3]])
        try await Task.sleep(for: .milliseconds(400))
        #expect(writes.batches.withLock { $0 } == [["a": 1], ["b": 3], ["a": 9]])
        running.cancel()
        _ = try? await running.value
    }

    @Test func aFailedWriteIsTriedAgainAndShutdownWritesWhatIsPending() async throws {
        let writes = Writes()
        writes.failing.withLock { $0 = true }
        let coalescer = Coalescer<String>(interval: .milliseconds(100)) { try writes.write($0) }
        var next = await coalescer.pass(now: .now)
        #expect(next == .seconds(1))
        coalescer.submit("a", 4)
        next = await coalescer.pass(now: .now)
        #expect(writes.batches.withLock { $0 }.isEmpty && next == .seconds(1))
        coalescer.submit("a", 6)
        writes.failing.withLock { $0 = false }
        await coalescer.pass(now: .now + .seconds(2))
        #expect(writes.batches.withLock { $0 } == [["a": 6]])
        // What is pending at shutdown is written, due or not.
        coalescer.submit("a", 8)
        let running = Task { try await coalescer.run() }
        running.cancel()
        _ = try? await running.value
        #expect(writes.batches.withLock { $0 }.last == ["a": 8])
    }
}
