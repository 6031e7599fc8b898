import Foundation
import ParleyTestSupport
import Synchronization
import Testing

@testable import parley_load

/// The generator's own rules: what it measures must be what it says.
struct LoadGeneratorTests {
    @Test func aSendStampSurvivesTheRoundTripThroughACanonicalEvent() throws {
        let uid = SendStamp.uid(step: 3, sender: 41, intended: 123_456_789_012, index: 7)
        let event = RoomPlan.event(room: API.Room(id: 9, uid: "room-uid-0123456789"), sender: 41, uid: uid)
        let stamp = try #require(SendStamp(payload: event))
        #expect(stamp.step == 3)
        #expect(stamp.sender == 41)
        #expect(stamp.intended == 123_456_789_012)
        // Client input carries it the same way; anything else is not a benchmark message.
        #expect(SendStamp(payload: RoomPlan.input(API.Room(id: 9, uid: "r"), uid))?.sender == 41)
        #expect(SendStamp(payload: Array(#"{"data":{"uid":"someone-else"}}"#.utf8)) == nil)
        #expect(SendStamp(payload: Array(#"{"data":{"chatRoomUid":"s1-2-3-4"}}"#.utf8)) == nil)
    }

    /// A member's first publish on a topic is a look-up the broker's plugin waits for: the
    /// warm-up hears from every member of every scenario, so no measured step holds one.
    @Test(arguments: [(rooms: 50, members: 2, firstRate: 250.0), (1000, 2, 250), (2, 100, 5), (1000, 2, 2000)])
    func theWarmUpHearsFromEveryMember(rooms: Int, members: Int, firstRate: Double) {
        let rate = RoomPlan.warmRate(ladderStart: firstRate)
        #expect((50...200).contains(rate))
        let sent = Int(rate) * RoomPlan.warmSeconds(senders: rooms * members, rate: rate)
        let senders = Set((0..<sent).map { RoomPlan.sender(at: $0, rooms: rooms, members: members).sender })
        #expect(senders == Set(0..<rooms * members))
        // Each sender is a member of the room it sends to.
        #expect(
            (0..<sent).allSatisfy { index in
                let (room, sender) = RoomPlan.sender(at: index, rooms: rooms, members: members)
                return sender / members == room
            })
    }

    @Test func theLadderStopsAtTheFirstFailureAndNarrowsTheGap() async throws {
        let ladder = RateLadder(
            rates: [100, 200, 400, 800], stepDuration: .seconds(1), p99Limit: 50, cpu: try ProcessCPU(watch: []))
        let offered = Mutex<[Double]>([])
        let measurement = try await ladder.climb(label: "test", unit: "op/s") { rate, _ in
            offered.withLock { $0.append(rate) }
            // Holds up to 500/s; above, p99 goes past the goal.
            return RateLadder.Outcome(
                expected: Int(rate), completed: Int(rate), errors: 0,
                latency: LatencySummary(count: Int(rate), p50: 1, p99: rate <= 500 ? 10 : 80, p999: 90, max: 100))
        }
        #expect(offered.withLock { $0 } == [100, 200, 400, 800, 600, 500])
        #expect(measurement.best?.offeredRate == 500)
        #expect(measurement.best?.achievedRate == 500)
    }

    @Test func aFirstRateThatFailsIsHalvedUntilOnePasses() async throws {
        let ladder = RateLadder(
            rates: [400, 800], stepDuration: .seconds(1), p99Limit: 50, cpu: try ProcessCPU(watch: []))
        let offered = Mutex<[Double]>([])
        let measurement = try await ladder.climb(label: "test", unit: "op/s") { rate, _ in
            offered.withLock { $0.append(rate) }
            // Holds up to 150/s.
            return RateLadder.Outcome(
                expected: Int(rate), completed: Int(rate), errors: 0,
                latency: LatencySummary(count: Int(rate), p50: 1, p99: rate <= 150 ? 10 : 80, p999: 90, max: 100))
        }
        #expect(offered.withLock { $0 } == [400, 200, 100, 150, 175])
        #expect(measurement.best?.offeredRate == 150)
    }

    @Test func aNearMissIsOfferedOnceMoreAndAFarMissIsNot() async throws {
        let ladder = RateLadder(
            rates: [100, 200, 400], stepDuration: .seconds(1), p99Limit: 50, cpu: try ProcessCPU(watch: []))
        let offered = Mutex<[Double]>([])
        let measurement = try await ladder.climb(label: "test", unit: "op/s") { rate, _ in
            // Holds up to 300/s, but its first step at 200 misses narrowly (p99 60 ms).
            let first200 = offered.withLock { offered in
                defer { offered.append(rate) }
                return rate == 200 && !offered.contains(200)
            }
            let p99: Double = first200 ? 60 : rate <= 300 ? 10 : 200
            return RateLadder.Outcome(
                expected: Int(rate), completed: Int(rate), errors: 0,
                latency: LatencySummary(count: Int(rate), p50: 1, p99: p99, p999: p99, max: p99))
        }
        #expect(offered.withLock { $0 } == [100, 200, 200, 400, 300, 350])
        #expect(measurement.steps?.map(\.passed) == [true, false, true, false, true, false])
        #expect(measurement.best?.offeredRate == 300)
    }

    @Test func everyStepMissingNarrowlyStaysWithinTheMostStepsALadderMayTake() async throws {
        for rates in [[100.0, 200, 400], [400.0]] {
            let ladder = RateLadder(
                rates: rates, stepDuration: .seconds(1), p99Limit: 50, cpu: try ProcessCPU(watch: []))
            // Passes below 150/s, and every miss is narrow, so every miss is offered twice.
            let measurement = try await ladder.climb(label: "test", unit: "op/s") { rate, _ in
                RateLadder.Outcome(
                    expected: Int(rate), completed: Int(rate), errors: 0,
                    latency: LatencySummary(count: Int(rate), p50: 1, p99: rate < 150 ? 10 : 60, p999: 60, max: 60))
            }
            #expect((measurement.steps?.count ?? .max) <= RateLadder.maximumSteps(rates: rates.count))
        }
    }

    @Test func aStepWithLossOrErrorsDoesNotPassWhateverItsLatency() async throws {
        let ladder = RateLadder(
            rates: [100, 200], stepDuration: .seconds(1), p99Limit: 50, cpu: try ProcessCPU(watch: []))
        let measurement = try await ladder.climb(label: "test", unit: "op/s", refinements: 0) { rate, _ in
            RateLadder.Outcome(
                expected: Int(rate), completed: rate == 200 ? 199 : 100, errors: 0,
                latency: LatencySummary(count: 1, p50: 1, p99: 1, p999: 1, max: 1))
        }
        #expect(measurement.steps?.map(\.passed) == [true, false])
        #expect(measurement.best?.offeredRate == 100)
    }

    /// A child that ends within a step (a PostgreSQL backend whose connection closed) keeps
    /// counting: its time moves to its parent's waited-for children, not out of the sum.
    @Test func aWatchedTreeKeepsTheCPUOfChildrenThatEnded() async throws {
        let marker = TestScratch.path("parley-load-cpu")
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let parent = try Subprocess.start(
            "/bin/sh",
            [
                "-c",
                "/bin/sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'; touch '\(marker)'; exec sleep 20",
            ], outputFile: "/dev/null")
        try await Subprocess.stopping(parent) {
            let cpu = try ProcessCPU(watch: ["tree=\(parent)"])
            let start = cpu.sample()["tree"] ?? 0
            for _ in 0..<300 where !FileManager.default.fileExists(atPath: marker) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(FileManager.default.fileExists(atPath: marker))
            // The busy child has ended; its CPU time is still the tree's.
            #expect((cpu.sample()["tree"] ?? 0) - start >= 0.05)
        }
    }

    @Test func percentilesComeFromTheHistogram() {
        let recorder = LatencyRecorder()
        let now: UInt64 = 10_000_000_000
        for millisecond in 1...1000 { recorder.record(sinceIntended: now - UInt64(millisecond) * 1_000_000, now: now) }
        recorder.recordFailure()
        let summary = recorder.summary()
        #expect(summary.count == 1000)
        #expect(abs(summary.p50 - 500) <= 1)
        #expect(abs(summary.p99 - 990) <= 1)
        #expect(abs(summary.max - 1000) <= 1)
        #expect(recorder.failureCount == 1)
    }

    @Test func theOpenLoopKeepsItsScheduleWhateverEachOperationTakes() async {
        let intended = Mutex<[UInt64]>([])
        let started = await OpenLoop.run(rate: 1000, duration: .milliseconds(100)) { _, time in
            intended.withLock { $0.append(time) }
            // A slow operation must not delay the ones after it.
            try? await Task.sleep(for: .milliseconds(30))
        }
        let times = intended.withLock { $0.sorted() }
        #expect(started == 100)
        #expect(times.count == 100)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { (999_000...1_001_000).contains($0) })
    }
}
