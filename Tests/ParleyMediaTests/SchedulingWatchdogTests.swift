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
        // Each loop's thread, as gdb names it (by its kernel thread id).
        let loops = MultiThreadedEventLoopGroup.singleton.makeIterator().map { loop in
            (loop, (try? loop.submit { Self.threadID() }.wait()) ?? "?")
        }
        while Date().timeIntervalSince(origin) < window && stalls.count < 3 {
            var probes: [Probe] = [
                Probe(name: "the task pool", threads: "swift_job_run", stat: "/proc/self/stat") { done in
                    Task.detached { done() }
                }
            ]
            for (index, (loop, thread)) in loops.enumerated() {
                probes.append(
                    Probe(
                        name: "event loop \(index)", threads: "(LWP \(thread))", stat: "/proc/self/task/\(thread)/stat"
                    ) {
                        done in loop.execute { done() }
                    })
            }
            for probe in probes {
                let answered = Flag()
                let asked = Date()
                let before = CPUSample(probe.stat)
                probe.ask { answered.set() }
                if !wait(for: answered, seconds: bound) {
                    let during = CPUSample(probe.stat).since(before, over: bound)
                    // gdb stops the whole process while it reads the stacks, so its time is not
                    // counted (a thread that slept through it makes this a lower bound).
                    let snapshotStarted = Date()
                    let stacks = Self.whereThreadsStand(matching: probe.threads)
                    let snapshot = Date().timeIntervalSince(snapshotStarted)
                    wait(for: answered, seconds: 60)
                    let stalled = max(bound, (answered.at ?? Date()).timeIntervalSince(asked) - snapshot)
                    stalls.append(
                        "\(probe.name) ran nothing for at least \(Self.seconds(stalled)) s (gdb's \(Self.seconds(snapshot)) s "
                            + "not counted), from \(Self.seconds(asked.timeIntervalSince(origin))) s into the run; "
                            + "in its first \(Self.seconds(bound)) s \(during); its threads stood at:\n\(stacks)")
                }
            }
            usleep(50_000)
        }
        return stalls
    }

    struct Probe {
        let name: String
        /// What marks its threads in gdb's snapshot.
        let threads: String
        /// Where the kernel counts its CPU time.
        let stat: String
        let ask: (@escaping @Sendable () -> Void) -> Void
    }

    /// The CPU time and state of a thread (or of the whole process) from `/proc`, so a stall
    /// tells a held or blocked thread (busy, or asleep) from one waiting for a core (runnable,
    /// little CPU, many runnable tasks on the machine).
    struct CPUSample {
        let state: String
        let seconds: Double

        init(_ path: String) {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            // After the parenthesised command name: state, then utime and stime at 12 and 13.
            let fields = text.split(separator: ")").last?.split(separator: " ") ?? []
            state = fields.first.map(String.init) ?? "?"
            let ticks = fields.count > 13 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
            seconds = ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        func since(_ earlier: CPUSample, over interval: TimeInterval) -> String {
            let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ")
            let runnable = load.map { $0.count > 3 ? String($0[3].split(separator: "/")[0]) : "?" } ?? "?"
            return "it used \(String(format: "%.2f", seconds - earlier.seconds)) s of CPU and is now \(state) "
                + "(\(runnable) tasks runnable on the machine)"
        }
    }

    /// The kernel's id of the calling thread (Glibc's overlay has no `gettid`).
    private static func threadID() -> String {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
        return String(link.split(separator: "/").last ?? "?")
    }

    private static func seconds(_ interval: TimeInterval) -> String { String(format: "%.1f", interval) }

    @discardableResult
    private func wait(for answered: Flag, seconds: TimeInterval) -> Bool {
        let started = Date()
        while !answered.isSet && Date().timeIntervalSince(started) < seconds { usleep(5_000) }
        return answered.isSet
    }

    /// Whether a probe ran, and when.
    final class Flag: Sendable {
        private let answeredAt = Mutex<Date?>(nil)
        func set() { answeredAt.withLock { $0 = Date() } }
        var at: Date? { answeredAt.withLock { $0 } }
        var isSet: Bool { at != nil }
    }

    /// Where each thread whose stack mentions `marker` stood (gdb): the project's own frames
    /// where it has some, else its innermost frames, so a stall in a library names the call.
    static func whereThreadsStand(matching marker: String) -> String {
        let path = NSTemporaryDirectory() + "parley-watchdog-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/bin/sh")
        let demangle = "command -v swift-demangle >/dev/null && swift-demangle --simplified || cat"
        gdb.arguments = [
            "-c", "gdb -p \(getpid()) -batch -ex 'thread apply all bt 40' 2>/dev/null | { \(demangle); } > \(path)",
        ]
        guard (try? gdb.run()) != nil else { return "(gdb did not start)" }
        gdb.waitUntilExit()
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let threads = text.components(separatedBy: "\nThread ").filter { $0.contains(marker) }
        let stands = threads.map { thread -> String in
            let frames = thread.split(separator: "\n").filter { $0.hasPrefix("#") }
            let own = frames.filter {
                ($0.contains("/Sources/") || $0.contains("/Tests/")) && !$0.contains("/.build/")
            }
            let shown = own.isEmpty ? frames.prefix(8).map(Self.function) : own.prefix(4).map(Self.location)
            return "- " + shown.joined(separator: " < ")
        }
        return stands.isEmpty ? "- (no such thread in gdb's snapshot)" : stands.joined(separator: "\n")
    }

    /// `file:line` of a frame line of gdb.
    private static func location(_ frame: Substring) -> String {
        frame.range(of: " at ").map { String(frame[$0.upperBound...]) } ?? function(frame)
    }

    /// The function of a frame line of gdb, without its arguments.
    private static func function(_ frame: Substring) -> String {
        var text = frame.drop { $0 != " " }.drop { $0 == " " }
        if text.hasPrefix("0x"), let name = text.range(of: " in ") { text = text[name.upperBound...] }
        let name = text.range(of: " (").map { text[..<$0.lowerBound] } ?? text
        return String(name.prefix(160))
    }
}
