import Foundation
import Synchronization
import Testing

@testable import ParleyRuntime

/// Parley's own threads show their names to `top`, `perf` and `/proc`: a name set on a
/// Foundation thread before it starts is lost on Linux, and one past 15 bytes is refused.
struct NamedThreadTests {
    /// The names of this process's threads, as the kernel has them.
    static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").map {
            try String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
                .trimmingCharacters(in: .newlines)
        }
    }

    final class Started: Sendable {
        let value = Mutex(false)
    }

    @Test func aStartedThreadShowsItsNameCutToWhatLinuxKeeps() async throws {
        let started = Started()
        let release = DispatchSemaphore(value: 0)
        Thread.start(named: "parley-test-thread-with-a-long-name") {
            started.value.withLock { $0 = true }
            release.wait()
        }
        defer { release.signal() }
        let deadline = ContinuousClock.now + .seconds(5)
        while !started.value.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(Thread.nameLimit == 15)
        #expect(try Self.threadNames().contains("parley-test-thr"))
    }

    @Test func aBlockingCallRunsOnAThreadOfItsName() async throws {
        let names = await BlockingCall.run("parley-blocking") { try? Self.threadNames() }
        #expect(names?.contains("parley-blocking") == true)
    }
}
