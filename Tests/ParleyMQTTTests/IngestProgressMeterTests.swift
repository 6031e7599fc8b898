import ParleyCore
import Testing

@testable import ParleyMQTT

/// What the ingest tells the broker plugin: what it settled since its last report, and whether
/// it is idle, at most once a second when there is nothing else to say.
struct IngestProgressMeterTests {
    @Test func aReportCarriesWhatWasSettledSinceTheLastOne() {
        let meter = IngestProgressMeter(idleEvery: 10)
        for _ in 0..<5 { meter.receivedOne() }
        meter.settled(3)
        #expect(meter.report(holding: true) == IngestProgress(settled: 3, idle: false))
        meter.settled(2)
        // Nothing arrived and nothing is held: the broker holds nothing for this ingest.
        #expect(meter.report(holding: false) == IngestProgress(settled: 2, idle: true))
    }

    @Test func aBusyIngestWithNothingSettledSaysNothing() {
        let meter = IngestProgressMeter(idleEvery: 10)
        meter.receivedOne()
        #expect(meter.report(holding: true) == nil)
        #expect(meter.report(holding: true) == nil)
    }

    @Test func anIdleIngestSaysSoOnceInEveryTenReports() {
        let meter = IngestProgressMeter(idleEvery: 10)
        let reports = (0..<25).map { _ in meter.report(holding: false) }
        #expect(reports.indices.filter { reports[$0] != nil } == [0, 10, 20])
        #expect(reports[0] == IngestProgress(settled: 0, idle: true))
        // News resets the count: the next idle report comes at once.
        meter.settled(1)
        #expect(meter.report(holding: false) == IngestProgress(settled: 1, idle: true))
        #expect(meter.report(holding: false) == IngestProgress(settled: 0, idle: true))
    }

    @Test func theReportIsTheJSONThePluginReads() {
        #expect(IngestProgress(settled: 12, idle: false).json() == #"{"settled":12,"idle":false}"#)
    }
}
