import Foundation
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test helper that runs programs: what a hung or greedy child must not do to a run.
struct SubprocessTests {
    @Test func aChildGetsOnlyItsThreeStandardDescriptors() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let listing = try await Subprocess.run("/bin/sh", ["-c", "ls /proc/$$/fd"])
        let descriptors = listing.standardOutput.split(separator: "\n").compactMap { Int32($0) }
        #expect(Set(descriptors) == [0, 1, 2], "\(listing.standardOutput)")
    }

    @Test func aProgramStillRunningAtItsLimitIsKilledAndSaysSo() async throws {
        let started = ContinuousClock.now
        let result = try await Subprocess.run("/bin/sleep", ["30"], timeLimit: .milliseconds(300))
        #expect(result.status == 128 + SIGKILL)
        #expect(result.standardError.contains("still running"))
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func terminateKillsAProgramThatIgnoresSIGTERM() async throws {
        let output = TestScratch.path("parley-ignores-term")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let pid = try Subprocess.start("/bin/sh", ["-c", "trap '' TERM; sleep 30 & wait"], outputFile: output)
        try await Task.sleep(for: .milliseconds(200))
        #expect(await Subprocess.terminate(pid, grace: .milliseconds(300)) == 128 + SIGKILL)
    }
}
