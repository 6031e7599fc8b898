import ParleyCore
import Synchronization

/// Counts what the ingest received and settled, for its reports to the broker plugin
/// (``IngestProgress``): each report says what was settled since the last one, and whether
/// the ingest is idle. An idle ingest reports once a second, a busy one whenever it settled
/// something.
final class IngestProgressMeter: Sendable {
    private let received = Atomic<Int>(0)
    private let settled = Atomic<Int>(0)
    private let quietReports = Atomic<Int>(0)
    /// Reports without news between two idle ones: with one every 100 ms, one a second.
    private let idleEvery: Int

    init(idleEvery: Int) { self.idleEvery = max(1, idleEvery) }

    func receivedOne() { received.add(1, ordering: .relaxed) }
    func settled(_ count: Int) { settled.add(count, ordering: .relaxed) }

    /// The report due now, or nil. `holding`: messages received and not yet settled.
    func report(holding: Bool) -> IngestProgress? {
        let arrived = received.exchange(0, ordering: .relaxed)
        let done = settled.exchange(0, ordering: .relaxed)
        let idle = arrived == 0 && !holding
        if done > 0 {
            quietReports.store(0, ordering: .relaxed)
            return IngestProgress(settled: done, idle: idle)
        }
        guard idle else { return nil }
        let quiet = quietReports.add(1, ordering: .relaxed).newValue
        guard (quiet - 1) % idleEvery == 0 else { return nil }
        return IngestProgress(settled: 0, idle: true)
    }
}
