import Foundation
import NIOPosix
import ParleyCore
import Synchronization
import Testing

/// While the whole suite runs at once, no test holds Swift concurrency's threads or NIO's event
/// loops for seconds. A test that did (one made 50 MiB byte by byte in an unoptimised build on
/// both pool threads for 17 s) failed others at random: broker ACL calls timed out into denials,
/// push connections into `connectTimeout`. Starvation shows as seconds, so a 3 s bound does not
/// flake on a busy machine (with both cores loaded the worst probe waited 0.6 s); a failure
/// names where the pool's and loops' threads stood.
struct SchedulingWatchdogTests {
    @Test func noTestHoldsTheTaskPoolOrAnEventLoopForSeconds() async {
        let stalls = await BlockingCall.run("parley-test-watchdog") {
            SchedulingWatchdog(window: 90, bound: 3).watch()
        }
        #expect(stalls.isEmpty, "\(stalls.joined(separator: "\n"))")
    }
}

/// Probes the task pool and each event loop of NIO's shared group from a thread of its own
/// and reports every probe that waited longer than `bound` seconds, with the threads' stacks.
struct SchedulingWatchdog {
    let window: TimeInterval
    let bound: TimeInterval

    func watch() -> [String] {
        let origin = Date()
        var stalls: [String] = []
        while Date().timeIntervalSince(origin) < window && stalls.count < 3 {
            var probes: [(String, (@escaping @Sendable () -> Void) -> Void)] = [
                ("the task pool", { done in Task.detached { done() } })
            ]
            for (index, loop) in MultiThreadedEventLoopGroup.singleton.makeIterator().enumerated() {
                probes.append(("event loop \(index)", { done in loop.execute { done() } }))
            }
            for (name, probe) in probes {
                let answered = Flag()
                let asked = Date()
                probe { answered.set() }
                if !wait(for: answered, seconds: bound) {
                    let stacks = Self.whereThreadsStand()
                    wait(for: answered, seconds: 60)
                    stalls.append(
                        "\(name) ran nothing for \(String(format: "%.1f", Date().timeIntervalSince(asked))) s, "
                            + "from \(String(format: "%.1f", asked.timeIntervalSince(origin))) s into the run; "
                            + "its threads stood at:\n\(stacks)")
                }
            }
            usleep(50_000)
        }
        return stalls
    }

    @discardableResult
    private func wait(for answered: Flag, seconds: TimeInterval) -> Bool {
        let started = Date()
        while !answered.isSet && Date().timeIntervalSince(started) < seconds { usleep(5_000) }
        return answered.isSet
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    /// The project's own frames of every thread running a Swift job or an event loop (gdb).
    static func whereThreadsStand() -> String {
        let path = NSTemporaryDirectory() + "parley-watchdog-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: nil)
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", "\(getpid())", "-batch", "-ex", "thread apply all bt 40"]
        gdb.standardOutput = FileHandle(forWritingAtPath: path)
        gdb.standardError = FileHandle.nullDevice
        guard (try? gdb.run()) != nil else { return "(gdb did not start)" }
        gdb.waitUntilExit()
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let threads = text.components(separatedBy: "\nThread ").filter {
            $0.contains("swift_job_run") || $0.contains("NIO-SGLTN")
        }
        let held = threads.compactMap { thread -> String? in
            let frames = thread.split(separator: "\n").filter {
                ($0.contains("/Sources/") || $0.contains("/Tests/")) && !$0.contains("/.build/")
            }
            let location = frames.compactMap { frame in frame.range(of: " at ").map { frame[$0.upperBound...] } }
            return location.isEmpty ? nil : "- " + location.prefix(4).joined(separator: " < ")
        }
        return held.isEmpty ? "- (no frame of Parley's code)" : held.joined(separator: "\n")
    }
}
