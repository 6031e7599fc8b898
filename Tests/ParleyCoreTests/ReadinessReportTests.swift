import ParleyCore
import ParleyTestSupport
import Testing

struct ReadinessReportTests {
    struct Probe: DependencyProbe {
        let name: String
        let behaviour: @Sendable () async throws -> Void
        func probe() async throws { try await behaviour() }
    }

    struct Down: Error {}

    @Test func allUpIsReady() async {
        let report = await ReadinessReport.evaluate(
            [Probe(name: "a") {}, Probe(name: "b") {}], timeout: .seconds(1))
        #expect(report.isReady)
        #expect(report.checks == ["a": .up, "b": .up])
        #expect(report.failing.isEmpty)
    }

    @Test func aFailingProbeIsNamed() async {
        let report = await ReadinessReport.evaluate(
            [Probe(name: "postgres") { throw Down() }, Probe(name: "redis") {}], timeout: .seconds(1))
        #expect(!report.isReady)
        #expect(report.checks == ["postgres": .down, "redis": .up])
        #expect(report.failing == ["postgres"])
    }

    @Test func aHungProbeTimesOutWithoutHidingTheOthers() async {
        let hung = Probe(name: "mqtt") {
            await uncancellableSleep(seconds: 10)
        }
        let start = ContinuousClock.now
        let report = await ReadinessReport.evaluate([hung, Probe(name: "redis") {}], timeout: .milliseconds(200))
        // Far below the hung probe's 10 s, with room for a loaded machine.
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(report.checks == ["mqtt": .timeout, "redis": .up])
    }
}
