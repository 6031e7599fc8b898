import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Synchronization
import Testing

/// The fan-out keeps a room's readers with the version they were read at: a room's next
/// messages at that version need no query, and a change of who reads it (a higher version,
/// carried by the next message) is read again at once.
struct ReaderCacheTests {
    let logger = Logger(label: "test")

    /// A relay batch of one new message per room, each at its room's readers version.
    func batch(_ messages: [(room: Int64, event: String, version: Int64?)]) -> String {
        FanoutBatch.encode(messages.map { newMessageEntry(room: $0.room, event: $0.event, readers: $0.version) })
    }

    func queries(_ readers: FakeReaders) -> Int { readers.asked.withLock { $0.count } }

    @Test func aRoomsNextMessagesAtTheSameVersionReadNoReaders() async throws {
        let readers = FakeReaders([1: [10, 11], 2: [20]])
        let publisher = RecordingPublisher()
        let handler = FanoutHandler(readers: readers, publisher: publisher, queue: RecordingQueue(), logger: logger)

        try await handler.handle(batch([(1, "A", 0), (2, "B", 0)]))
        try await handler.handle(batch([(1, "C", 0)]))
        try await handler.handle(batch([(2, "D", 0), (1, "E", 0)]))

        #expect(queries(readers) == 1)
        let expected = [(10, "A"), (11, "A"), (20, "B"), (10, "C"), (11, "C"), (20, "D"), (10, "E"), (11, "E")]
        #expect(publisher.copies == expected.map { "messenger-notifications/\($0.0) \($0.1)" })
    }

    @Test func aRemovedReaderGetsNothingOnceTheChangeIsCommitted() async throws {
        let readers = FakeReaders([1: [10, 11]])
        let publisher = RecordingPublisher()
        let handler = FanoutHandler(readers: readers, publisher: publisher, queue: RecordingQueue(), logger: logger)

        try await handler.handle(batch([(1, "A", 0)]))
        readers.change(1, to: [10])
        // A message committed after the change carries the new version.
        try await handler.handle(batch([(1, "B", readers.version(of: 1))]))
        try await handler.handle(batch([(1, "C", readers.version(of: 1))]))

        #expect(queries(readers) == 2)
        let expected = [(10, "A"), (11, "A"), (10, "B"), (10, "C")]
        #expect(publisher.copies == expected.map { "messenger-notifications/\($0.0) \($0.1)" })
    }

    @Test func readersReadAtALaterVersionServeAnEarlierMessage() async throws {
        let readers = FakeReaders([1: [10, 11]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger)
        readers.change(1, to: [10, 11, 12])

        try await handler.handle(batch([(1, "A", 1)]))
        // Relayed before the change committed; its fan-out ran after.
        try await handler.handle(batch([(1, "B", 0)]))

        #expect(queries(readers) == 1)
    }

    @Test func jobsWithoutAVersionAndRoomsLargerThanAChunkAreReadEveryTime() async throws {
        let readers = FakeReaders([1: [10, 11], 2: [1, 2, 3]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), chunkSize: 2, logger: logger)

        try await handler.handle(batch([(1, "A", nil)]))
        try await handler.handle(batch([(1, "B", nil)]))
        #expect(queries(readers) == 2)
        // A full first chunk is not the whole room.
        try await handler.handle(batch([(2, "C", 0)]))
        try await handler.handle(batch([(2, "D", 0)]))
        #expect(queries(readers) == 4)
    }

    @Test func aFullCacheStartsAgainEmpty() async throws {
        let readers = FakeReaders([1: [10, 11], 2: [20, 21]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger,
            cacheCapacity: 3)

        try await handler.handle(batch([(1, "A", 0)]))
        try await handler.handle(batch([(1, "B", 0)]))
        #expect(queries(readers) == 1)
        // Room 2's readers do not fit beside room 1's: room 1's are forgotten.
        try await handler.handle(batch([(2, "C", 0)]))
        try await handler.handle(batch([(1, "D", 0)]))
        #expect(queries(readers) == 3)
    }
}
