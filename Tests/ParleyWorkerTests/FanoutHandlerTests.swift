import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Synchronization
import Testing

/// The fan-out works a relay batch as a whole: one readers query, one publish batch in commit
/// order, one push query for all its rooms, and the rest of large rooms queued after.
struct FanoutHandlerTests {
    let logger = Logger(label: "test")

    /// A relay batch of new messages, as the outbox stores them (the event beside its job).
    func batch(_ messages: [(room: Int64, event: String, sender: Int64)]) -> String {
        FanoutBatch.encode(messages.map { newMessageEntry(room: $0.room, event: $0.event, sender: $0.sender) })
    }

    @Test func aBatchReadsItsRoomsReadersOnceAndPublishesEveryCopyInCommitOrder() async throws {
        let readers = FakeReaders([1: [10, 11], 2: [20, 21, 22]])
        let publisher = RecordingPublisher()
        let handler = FanoutHandler(readers: readers, publisher: publisher, queue: RecordingQueue(), logger: logger)

        try await handler.handle(batch([(1, "A", 10), (2, "B", 20), (1, "C", 11)]))

        #expect(
            readers.asked.withLock { $0 } == [[ReaderChunk(roomID: 1, after: 0), ReaderChunk(roomID: 2, after: 0)]])
        #expect(publisher.batches.withLock { $0.count } == 1)
        let copies = [(10, "A"), (11, "A"), (20, "B"), (21, "B"), (22, "B"), (10, "C"), (11, "C")]
        #expect(publisher.copies == copies.map { "messenger-notifications/\($0.0) \($0.1)" })
    }

    @Test func aLargeRoomGetsItsFirstChunkAndTheRestIsQueuedAsAJobOfItsOwn() async throws {
        let readers = FakeReaders([1: [1, 2, 3, 4, 5]])
        let publisher = RecordingPublisher()
        let queue = RecordingQueue()
        let handler = FanoutHandler(readers: readers, publisher: publisher, queue: queue, chunkSize: 2, logger: logger)

        try await handler.handle(batch([(1, "A", 1)]))
        #expect(publisher.copies == ["messenger-notifications/1 A", "messenger-notifications/2 A"])
        // Each continuation carries its event and goes on from its chunk's last reader.
        while let next = queue.rounds.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            for job in next { try await handler.handle(job) }
        }
        #expect(publisher.copies == (1...5).map { "messenger-notifications/\($0) A" })
    }

    @Test func aBatchsPushesAreWorkedOutWithOneQueryForAllItsRoomsAndQueuedInOneRoundTrip() async throws {
        let audience = FakeAudience(devices: [10, 11, 21])
        let queue = RecordingQueue()
        let pushQueue = RecordingQueue()
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11], 2: [20, 21]]), publisher: RecordingPublisher(), queue: queue,
            pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)

        try await handler.handle(batch([(1, "A", 10), (2, "B", 20), (1, "C", 11)]))

        #expect(audience.recipientQueries.withLock { $0 } == [[1: [11, 10], 2: [21]]])
        #expect(audience.contextQueries.withLock { $0.count } == 1)
        #expect(pushQueue.rounds.withLock { $0.count } == 1)
        // Never the sender: A pushes 11, B pushes 21, C pushes 10.
        let pushed = try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)) }
        #expect(pushed.map(\.userID) == [11, 21, 10])
        #expect(queue.jobs.isEmpty)
    }

    @Test func pushesThatCannotBeQueuedBecomeAJobOfTheirOwnAfterTheEventsWentOut() async throws {
        let audience = FakeAudience(devices: [11])
        audience.failing.withLock { $0 = true }
        let publisher = RecordingPublisher()
        let queue = RecordingQueue()
        let pushQueue = RecordingQueue()
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11]]), publisher: publisher, queue: queue,
            pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)

        try await handler.handle(batch([(1, "A", 10)]))
        #expect(publisher.copies.count == 2)
        let retry = try #require(queue.jobs.first)
        // Retried alone, the pushes-only job fails as a whole (the queue's back-off), publishes
        // nothing, and once the audience answers queues the push.
        await #expect(throws: FakeFailure.self) { try await handler.handle(retry) }
        audience.failing.withLock { $0 = false }
        try await handler.handle(retry)
        #expect(publisher.copies.count == 2)
        #expect(pushQueue.jobs.count == 1)
    }

    @Test func aMalformedBatchGoesToTheDeadLetters() async throws {
        let handler = FanoutHandler(
            readers: FakeReaders([:]), publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger)
        for payload in ["fanout-batch\n5\nabc", "fanout-batch\n2\n{}\n", "not json", "fanout-batch\nx\n"] {
            await #expect(throws: PermanentJobFailure.self) { try await handler.handle(payload) }
        }
    }
}

/// The batch's encoding carries the relay's bytes unchanged.
struct FanoutBatchTests {
    @Test func eventsPassUnchangedAndAJobsOwnEventIsKept() throws {
        let awkward = "{\"text\":\"řádek\\none\nreal newline\", \"emoji\":\"👩‍👩‍👧\"}"
        let own = FanoutJob(roomID: 2, event: "own", audience: .users, userIDs: [5])
        let encoded = FanoutBatch.encode([
            FanoutBatch.Entry(job: FanoutJob(roomID: 1, event: "", audience: .readers).json(), event: awkward),
            FanoutBatch.Entry(job: own.json(), event: nil),
            FanoutBatch.Entry(job: own.json(), event: "the row's"),
        ])
        let jobs = try FanoutBatch.decode(encoded)
        #expect(jobs.map(\.event) == [awkward, "own", "own"])
        #expect(jobs.map(\.roomID) == [1, 2, 2])
        // A single job (a continuation, or one queued before batches) still reads.
        #expect(try FanoutBatch.decode(own.json()) == [own])
    }
}
