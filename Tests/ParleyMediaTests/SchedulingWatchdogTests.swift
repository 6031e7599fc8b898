import Foundation
import NIOPosix
import ParleyCore
import ParleyRuntime
import Synchronization
import Testing

/// While the whole suite runs at once, no test holds Swift concurrency's threads or NIO's event
/// loops for seconds. A test that did (one made 50 MiB byte by byte in an unoptimised build on
/// both pool threads for 17 s) failed others at random: broker ACL calls timed out into denials,
/// push connections into `connectTimeout`. Starvation shows as seconds, so a 3 s bound does not
/// flake on a busy machine (with both cores loaded the worst probe waited 0.6 s); a failure
/// names where the pool's and loops' threads stood. A probe whose threads spent most of the
/// stall runnable, waiting for a core the kernel gave to another process (`stress-ng` beside
/// the suite), is reported but not counted: no code of the process held it.
struct SchedulingWatchdogTests {
    @Test func noTestHoldsTheTaskPoolOrAnEventLoopForSeconds() async {
        // The suite's first 60 s, counted from the test process's start: at a width of eight
        // this test may start half a minute in, and a window of its own would then outlast
        // every other test and set the suite's wall time.
        let window = max(20, 60 - SchedulingWatchdog.processAge())
        let stalls = await BlockingCall.run("parley-test-watchdog") {
            SchedulingWatchdog(window: window, bound: 3).watch()
        }
        for stall in stalls where stall.waitedForACore { print("watchdog, not counted: \(stall.report)") }
        let held = stalls.filter { !$0.waitedForACore }.map(\.report)
        #expect(held.isEmpty, "\(held.joined(separator: "\n"))")
    }

    @Test func aThreadWaitingForACoreIsToldFromOneHeldByItsCode() {
        let window = 3.0
        let starved = SchedulingWatchdog.SchedStat(onCPU: 0.05, waiting: 2.6)
        let busy = SchedulingWatchdog.SchedStat(onCPU: 2.9, waiting: 0.05)
        let asleep = SchedulingWatchdog.SchedStat(onCPU: 0.01, waiting: 0.01)
        let sharedWithStress = SchedulingWatchdog.SchedStat(onCPU: 1.2, waiting: 1.7)
        #expect(starved.waitedForACore(over: window))
        #expect(!busy.waitedForACore(over: window))
        #expect(!asleep.waitedForACore(over: window))
        // Running for 40 % of the window without answering is code holding the thread.
        #expect(!sharedWithStress.waitedForACore(over: window))
    }

    @Test func theProcessAgeGrowsWithTheClock() async throws {
        let before = SchedulingWatchdog.processAge()
        try await Task.sleep(for: .milliseconds(300))
        let after = SchedulingWatchdog.processAge()
        #expect(before > 0 && before < 3600, "\(before)")
        // Clock ticks are hundredths of a second.
        #expect(after - before > 0.2 && after - before < 5, "\(before) then \(after)")
    }

    @Test func theKernelCountsThisThreadsTimeOnACore() async {
        // On a thread of its own: spinning must not hold one of Swift concurrency's. Spins until
        // the kernel has counted 0.05 s on a core (a busy machine gives a spinning thread only
        // part of each second: a fixed 0.2 s of spinning once got 0.04 s), or 30 s pass.
        let counted = await BlockingCall.run("parley-test-spin") { () -> Double in
            let thread: Set<String> = [SchedulingWatchdog.threadID()]
            let before = SchedulingWatchdog.SchedStat(threads: thread)
            let started = Date()
            var spent = 0.0
            while spent <= 0.05 && Date().timeIntervalSince(started) < 30 {
                for _ in 0..<100_000 { blackHole(started) }
                spent = SchedulingWatchdog.SchedStat(threads: thread).since(before).onCPU
            }
            return spent
        }
        #expect(counted > 0.05)
    }
}

@inline(never) private func blackHole(_ value: Date) { _ = value.timeIntervalSinceReferenceDate }

/// Probes the task pool and each event loop of NIO's shared group from a thread of its own
/// and reports every probe that waited longer than `bound` seconds, with the threads' stacks.
struct SchedulingWatchdog {
    let window: TimeInterval
    let bound: TimeInterval

    /// A probe that waited longer than `bound`, and whether its threads were waiting for a core.
    struct Stall {
        let report: String
        let waitedForACore: Bool
    }

    /// Seconds since this process started, from the kernel's count of clock ticks since boot.
    static func processAge() -> TimeInterval {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
            let afterName = stat.range(of: ")", options: .backwards),
            let now = uptime.split(separator: " ").first.flatMap({ Double($0) })
        else { return 0 }
        // Field 22, `starttime`; the fields after the name start at field 3.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return 0 }
        return max(0, now - ticks / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    func watch() -> [Stall] {
        let origin = Date()
        var stalls: [Stall] = []
        // Each loop's thread, as gdb names it (by its kernel thread id).
        let loops = MultiThreadedEventLoopGroup.singleton.makeIterator().map { loop in
            (loop, (try? loop.submit { Self.threadID() }.wait()) ?? "?")
        }
        let watcher = Self.threadID()
        while Date().timeIntervalSince(origin) < window && stalls.count < 3 {
            var probes: [Probe] = [
                // The pool's threads carry no name; the process's other threads stand for them.
                Probe(
                    name: "the task pool", threads: "swift_job_run", stat: "/proc/self/stat",
                    kernelThreads: { Self.threadIDs().subtracting(loops.map(\.1)).subtracting([watcher]) },
                    // Summed over many threads: on average one of them was runnable all along.
                    waitedForACore: { scheduled in scheduled.waiting >= bound },
                    ask: { done in Task.detached { done() } }
                )
            ]
            for (index, (loop, thread)) in loops.enumerated() {
                probes.append(
                    Probe(
                        name: "event loop \(index)", threads: "(LWP \(thread))", stat: "/proc/self/task/\(thread)/stat",
                        kernelThreads: { [thread] },
                        waitedForACore: { scheduled in scheduled.waitedForACore(over: bound) },
                        ask: { done in loop.execute { done() } }
                    ))
            }
            for probe in probes {
                let answered = Flag()
                let asked = Date()
                let threads = probe.kernelThreads()
                let before = CPUSample(probe.stat)
                let scheduledBefore = SchedStat(threads: threads)
                probe.ask { answered.set() }
                if !wait(for: answered, seconds: bound) {
                    let during = CPUSample(probe.stat).since(before, over: bound)
                    let scheduled = SchedStat(threads: threads).since(scheduledBefore)
                    // gdb stops the whole process while it reads the stacks, so its time is not
                    // counted (a thread that slept through it makes this a lower bound).
                    let snapshotStarted = Date()
                    let stacks = Self.whereThreadsStand(matching: probe.threads)
                    let snapshot = Date().timeIntervalSince(snapshotStarted)
                    wait(for: answered, seconds: 60)
                    let stalled = max(bound, (answered.at ?? Date()).timeIntervalSince(asked) - snapshot)
                    stalls.append(
                        Stall(
                            report: "\(probe.name) ran nothing for at least \(Self.seconds(stalled)) s (gdb's "
                                + "\(Self.seconds(snapshot)) s not counted), from \(Self.seconds(asked.timeIntervalSince(origin))) s "
                                + "into the run; in its first \(Self.seconds(bound)) s \(during), and its threads were "
                                + "\(scheduled); its threads stood at:\n\(stacks)",
                            waitedForACore: probe.waitedForACore(scheduled)))
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
        /// The kernel's ids of its threads, whose time on and waiting for a core is counted.
        let kernelThreads: () -> Set<String>
        /// Whether those threads' time over the stall says they waited for a core.
        let waitedForACore: (SchedStat) -> Bool
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

    /// How long threads ran on a core and how long they were runnable but waited for one
    /// (`/proc/…/schedstat`, in nanoseconds), summed over the threads.
    struct SchedStat: CustomStringConvertible {
        let onCPU: Double
        let waiting: Double

        init(onCPU: Double, waiting: Double) {
            self.onCPU = onCPU
            self.waiting = waiting
        }

        init(threads: Set<String>) {
            var onCPU = 0.0
            var waiting = 0.0
            for thread in threads {
                let text = (try? String(contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8)) ?? ""
                let fields = text.split(separator: " ").compactMap {
                    Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                guard fields.count >= 2 else { continue }
                onCPU += fields[0] / 1e9
                waiting += fields[1] / 1e9
            }
            self.init(onCPU: onCPU, waiting: waiting)
        }

        func since(_ earlier: SchedStat) -> SchedStat {
            SchedStat(onCPU: onCPU - earlier.onCPU, waiting: waiting - earlier.waiting)
        }

        /// Runnable for most of the window and on a core for little of it: the machine, not the
        /// process's code, held the threads. A thread asleep in a call, or running code that
        /// does not let the probe in, fails this.
        func waitedForACore(over window: TimeInterval) -> Bool {
            waiting >= 0.5 * window && onCPU < 0.25 * window
        }

        var description: String {
            "on a core for \(String(format: "%.2f", onCPU)) s and waiting for one for \(String(format: "%.2f", waiting)) s"
        }
    }

    /// The kernel's ids of the process's threads.
    static func threadIDs() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [])
    }

    /// The kernel's id of the calling thread (Glibc's overlay has no `gettid`).
    static func threadID() -> String {
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
