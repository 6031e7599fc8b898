import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import parley

#if canImport(Glibc)
    import Glibc
#endif

/// Memory a burst freed goes back to the system within the trimmer's interval, not at the
/// next burst.
struct MemoryTrimmerTests {
    /// Anonymous memory resident now (`RssAnon` of /proc/self/status), in KiB.
    func residentAnonymousKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func freedMemoryIsReturnedWithinAnInterval() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [MemoryTrimmer(interval: .milliseconds(200))], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        // 200 MiB in 16 KiB blocks, written so they are resident, each followed by a small block
        // kept alive: freed, they are holes glibc keeps for reuse (nothing to shrink its heaps by).
        let blocks = (0..<12_800).map { _ -> (UnsafeMutableRawPointer, UnsafeMutableRawPointer) in
            let block = malloc(16_384)!
            memset(block, 1, 16_384)
            return (block, malloc(64)!)
        }
        let allocated = residentAnonymousKiB()
        for (block, _) in blocks { free(block) }
        var now = residentAnonymousKiB()
        for _ in 0..<50 where allocated - now < 100_000 {
            try await Task.sleep(for: .milliseconds(100))
            now = residentAnonymousKiB()
        }
        for (_, pin) in blocks { free(pin) }
        #expect(allocated - now >= 100_000, "resident \(allocated) KiB allocated, \(now) KiB after the free")
        await group.triggerGracefulShutdown()
        try await running.value
    }
}
