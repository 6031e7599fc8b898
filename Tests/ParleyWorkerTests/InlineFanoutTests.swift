import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Synchronization
import Testing

/// With the fan-out in its process, the relay publishes the copies of rooms whose readers are
/// kept itself, with its batch's events; the rest still goes through the queue.
struct InlineFanoutTests {
    let logger = Logger(label: "test")

    /// A new message's entry as the relay makes it.
    func entry(room: Int64, event: String, version: Int64, sender: Int64 = 10, tokens: Int64? = 1)
        -> FanoutBatch.Entry
    {
        newMessageEntry(room: room, event: event, sender: sender, readers: version, tokens: tokens)
    }

    @Test func aKeptRoomsCopiesGoWithTheBatchAndNothingIsQueued() async throws {
        let readers = FakeReaders([1: [10, 11]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger)
        // The room's first message went through the queue, and its readers were kept.
        try await handler.handle(FanoutBatch.encode([entry(room: 1, event: "A", version: 0)]))

        let plan = InlineFanout(sharing: handler).plan([entry(room: 1, event: "B", version: 0)])
        #expect(
            plan.copies.map { "\($0.topic) \($0.payload)" } == [
                "messenger-notifications/10 B", "messenger-notifications/11 B",
            ])
        // No pushes in this deployment: nothing to queue.
        #expect(plan.queued.isEmpty)
        #expect(readers.asked.withLock { $0.count } == 1)
    }

    @Test func roomsNotKeptChangedSinceOrNotMadeByTheRelayAreQueued() async throws {
        let readers = FakeReaders([1: [10, 11], 2: [20, 21]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger)
        try await handler.handle(FanoutBatch.encode([entry(room: 1, event: "A", version: 0)]))
        readers.change(1, to: [10])

        let stored = FanoutBatch.Entry(
            job: FanoutJob(roomID: 1, event: "", audience: .users, userIDs: [11]).json(), event: "removed")
        let plan = InlineFanout(sharing: handler).plan([
            entry(room: 2, event: "B", version: 0), entry(room: 1, event: "C", version: readers.version(of: 1)), stored,
        ])
        #expect(plan.copies.isEmpty)
        #expect(plan.queued.map(\.event) == ["B", "C", "removed"])
        // Queued, they reach the readers as they are now: the removed member gets nothing.
        let publisher = RecordingPublisher()
        let later = FanoutHandler(readers: readers, publisher: publisher, queue: RecordingQueue(), logger: logger)
        try await later.handle(FanoutBatch.encode(plan.queued))
        #expect(
            publisher.copies == [
                "messenger-notifications/20 B", "messenger-notifications/21 B",
                "messenger-notifications/10 C", "messenger-notifications/11 removed",
            ])
    }

    @Test func theirPushesAreQueuedOnlyWhileAReaderMayHaveAToken() async throws {
        let audience = FakeAudience(devices: [11])
        let pushQueue = RecordingQueue()
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11], 2: [20, 21]]), publisher: RecordingPublisher(), queue: RecordingQueue(),
            pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)
        // First messages by each member: readers kept, and 20 and 21 found without a token.
        try await handler.handle(
            FanoutBatch.encode([
                entry(room: 1, event: "A", version: 0), entry(room: 2, event: "B", version: 0, sender: 20),
                entry(room: 2, event: "B2", version: 0, sender: 21),
            ]))
        #expect(pushQueue.jobs.count == 1)

        let plan = InlineFanout(sharing: handler).plan([
            entry(room: 1, event: "C", version: 0), entry(room: 2, event: "D", version: 0, sender: 20),
        ])
        #expect(plan.copies.count == 4)
        // Room 1's reader 11 has a device: its pushes go as a job of their own, with no copies.
        let queued = try #require(plan.queued.first?.made)
        #expect(plan.queued.count == 1)
        #expect(queued.pushesOnly == true && queued.roomID == 1 && queued.userIDs == [10, 11])
        let publisher = RecordingPublisher()
        let pushing = FanoutHandler(
            readers: FakeReaders([:]), publisher: publisher, queue: RecordingQueue(),
            pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)
        try await pushing.handle(FanoutBatch.encode(plan.queued))
        #expect(publisher.copies.isEmpty)
        let pushed = try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)).userID }
        #expect(pushed == [11, 11])
    }
}
