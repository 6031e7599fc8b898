import Synchronization
import Testing

@testable import parley_load

/// `/health/live` sampling during benchmark steps: what it records must show a stall.
struct HealthSamplingTests {
    @Test func aHealthURLIsNamedAndAbsolute() throws {
        let target = try HealthTarget(argument: "serve=http://127.0.0.1:9090/health/live")
        #expect(target == HealthTarget(name: "serve", url: "http://127.0.0.1:9090/health/live"))
        for wrong in ["http://127.0.0.1:9090/health/live", "=http://h/x", "serve=/health/live", "worker=ftp://h/x"] {
            #expect(throws: LoadError.self) { try HealthTarget(argument: wrong) }
        }
    }

    /// Waits until `calls` reaches `count` (a busy machine may take a while; never forever).
    static func wait(for count: Int, _ calls: borrowing Atomic<Int>) async throws {
        for _ in 0..<1000 where calls.load(ordering: .relaxed) < count { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test func probesKeepTheirScheduleAndStopWithTheirTask() async throws {
        let recorder = LatencyRecorder()
        let calls = Atomic<Int>(0)
        let started = ContinuousClock.now
        let probe = Task {
            await HealthProbe.run(every: .milliseconds(10), into: recorder) {
                calls.add(1, ordering: .relaxed)
                return true
            }
        }
        try await Self.wait(for: 20, calls)
        probe.cancel()
        await probe.value
        let elapsed = ContinuousClock.now - started
        let stopped = calls.load(ordering: .relaxed)
        // Never ahead of the schedule (one probe per 10 ms from the start), none after the end.
        #expect(stopped >= 20)
        #expect(Double(stopped - 1) * 10 <= Double(elapsed / .milliseconds(1)) + 1)
        #expect(recorder.summary().count == stopped)
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.load(ordering: .relaxed) == stopped)
    }

    /// A 300 ms stall delays every probe due meanwhile, so it weighs in the p99 as it would
    /// in the server's clients, not as one slow sample among many fast ones.
    @Test func aStallCountsForEveryProbeDueDuringIt() async throws {
        let recorder = LatencyRecorder()
        let calls = Atomic<Int>(0)
        let probe = Task {
            await HealthProbe.run(every: .milliseconds(10), into: recorder) {
                let call = calls.add(1, ordering: .relaxed).newValue
                if call == 5 { try await Task.sleep(for: .milliseconds(300)) }
                return call != 40
            }
        }
        try await Self.wait(for: 60, calls)
        probe.cancel()
        await probe.value
        let summary = recorder.summary()
        #expect(summary.max >= 300)
        #expect(summary.p99 >= 250)
        // The probes due during the stall (about 30) went out right after it, each recording
        // its wait; waiting an interval after each answer would have recorded the stall once.
        #expect(summary.count + recorder.failureCount >= 60)
        #expect(recorder.failureCount == 1)
    }

    /// The step ends while a probe waits: its wait so far still counts.
    @Test func aProbeUnansweredAtTheEndOfTheStepCountsItsWait() async throws {
        let recorder = LatencyRecorder()
        let calls = Atomic<Int>(0)
        let probe = Task {
            await HealthProbe.run(every: .milliseconds(10), into: recorder) {
                calls.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .seconds(10))
                return true
            }
        }
        try await Self.wait(for: 1, calls)
        try await Task.sleep(for: .milliseconds(200))
        probe.cancel()
        await probe.value
        #expect(recorder.summary().count == 1)
        #expect(recorder.summary().max >= 150)
    }

    @Test func theSummaryLineNamesEachTargetInOrder() {
        func probes(_ p50: Double, _ p99: Double, _ max: Double, failures: Int = 0) -> HealthSampler.Summary {
            HealthSampler.Summary(
                latency: LatencySummary(count: 100, p50: p50, p99: p99, p999: max, max: max), failures: failures)
        }
        let line = HealthSampler.describe([
            "worker": probes(0.2, 0.8, 2), "serve": probes(0.31, 1.5, 2100, failures: 3),
        ])
        #expect(line == "serve 0.31/1.50/2100.00 (3 failed), worker 0.20/0.80/2.00 ms p50/p99/max")
        let options = try? HealthOptions.parse(["--health-p99-limit", "100"])
        let verdict = options?.verdict(
            ["serve": probes(0.3, 1.5, 2100), "worker": probes(0.2, 0.8, 2)], rate: 500, unit: "msg/s")
        #expect(verdict?.hasSuffix("every p99 within 100 ms") == true)
        let over = options?.verdict(["serve": probes(900, 2000, 2100)], rate: 500, unit: "msg/s")
        #expect(over?.hasSuffix("OVER the 100 ms goal (or failing): serve") == true)
    }
}
