import Testing

@testable import ParleyPostgres

/// When the relay deletes what it published: once enough rows have gathered or the oldest has
/// waited long enough, never while there is nothing to delete.
struct UndeletedOutboxRowsTests {
    let start = ContinuousClock.now

    @Test func nothingPublishedIsNeverDueAndTheRelayWaitsASecond() {
        let undeleted = OutboxRelay.Undeleted()
        undeleted.add([], at: start)
        #expect(!undeleted.isDue(at: start + .seconds(60)))
        #expect(undeleted.wait(at: start) == .seconds(1))
    }

    @Test func publishedRowsAreDueOnceTheOldestHasWaited() {
        let undeleted = OutboxRelay.Undeleted()
        undeleted.add([1, 2], at: start)
        undeleted.add([3], at: start + .milliseconds(200))
        #expect(undeleted.ids == [1, 2, 3])
        #expect(!undeleted.isDue(at: start + .milliseconds(249)))
        #expect(undeleted.wait(at: start + .milliseconds(200)) == .milliseconds(50))
        #expect(undeleted.isDue(at: start + OutboxRelay.Undeleted.delay))
        #expect(undeleted.wait(at: start + .seconds(1)) == .zero)
    }

    @Test func enoughRowsAreDueAtOnce() {
        let undeleted = OutboxRelay.Undeleted()
        undeleted.add(Array(1..<Int64(OutboxRelay.Undeleted.countLimit)), at: start)
        #expect(!undeleted.isDue(at: start))
        undeleted.add([Int64(OutboxRelay.Undeleted.countLimit)], at: start)
        #expect(undeleted.isDue(at: start))
    }

    @Test func deletedRowsStartTheWaitAgain() {
        let undeleted = OutboxRelay.Undeleted()
        undeleted.add([1], at: start)
        undeleted.removeAll()
        #expect(undeleted.ids.isEmpty)
        undeleted.add([2], at: start + .seconds(1))
        #expect(!undeleted.isDue(at: start + .seconds(1) + .milliseconds(100)))
    }
}
