import ParleyMedia
import ParleyTestSupport
import Testing

/// Blocking calls never hold the threads Swift concurrency runs on: on Linux they are one pool
/// of about a thread per core, growing about a thread a second, so every blocked call there
/// delays every task of the process. Starvation shows as several seconds, so a 1 s bound
/// does not flake on a busy machine.
struct ThreadStarvationTests {
    @Test func waitsForChildrenAndToolPipeReadsLeaveTheTaskPoolFree() async throws {
        let runner = ToolRunner(cpuSeconds: 10, wallTime: .seconds(30))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                // A child waited for with waitpid, and a media tool whose two pipes are read
                // until it ends: each blocks a thread for 3 s.
                group.addTask {
                    let result = try await Subprocess.run("/bin/sleep", ["3"])
                    #expect(result.status == 0)
                }
                group.addTask { try await runner.run("/bin/sleep", ["3"]) }
            }
            // Every child has started and is being waited for by now (or the pool is starved
            // and this sleep is late too, which the next one still shows).
            try await Task.sleep(for: .milliseconds(500))
            let asleep = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(100))
            let woke = ContinuousClock.now - asleep
            #expect(woke < .seconds(1), "a 100 ms sleep woke after \(woke) while children were waited for")
            try await group.waitForAll()
        }
    }
}
