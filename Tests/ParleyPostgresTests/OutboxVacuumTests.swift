import Testing

@testable import ParleyPostgres

/// When the relay vacuums the outbox: only after it deleted rows, at most once per interval.
struct OutboxVacuumTests {
    let start = ContinuousClock.now

    @Test func nothingDeletedIsNeverDue() {
        let vacuum = OutboxRelay.Vacuum()
        #expect(!vacuum.isDue(at: start))
        #expect(!vacuum.isDue(at: start + .seconds(60)))
    }

    @Test func theFirstDeletionIsDueAtOnceAndTheNextAfterTheInterval() {
        let vacuum = OutboxRelay.Vacuum()
        vacuum.deleted()
        #expect(vacuum.isDue(at: start))
        #expect(!vacuum.isDue(at: start), "counted as done")
        vacuum.deleted()
        #expect(!vacuum.isDue(at: start + OutboxRelay.Vacuum.interval - .milliseconds(1)))
        #expect(vacuum.isDue(at: start + OutboxRelay.Vacuum.interval))
        #expect(!vacuum.isDue(at: start + .seconds(60)), "nothing deleted since")
    }
}
