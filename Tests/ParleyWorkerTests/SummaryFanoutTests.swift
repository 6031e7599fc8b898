import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Synchronization
import Testing

/// Rooms' members with their unread counts, held in memory; counts the reads asked of it.
final class FakeSummaries: RoomSummaries {
    let members: [Int64: [MemberUnread]]
    let newest: [Int64: SummaryRead.Newest]
    let asked = Mutex<[Set<ReaderChunk>]>([])

    init(members: [Int64: [MemberUnread]], newest: [Int64: SummaryRead.Newest]) {
        self.members = members
        self.newest = newest
    }

    func summaries(of chunks: Set<ReaderChunk>, limit: Int) async throws -> SummaryRead {
        asked.withLock { $0.append(chunks) }
        var read = SummaryRead()
        for chunk in chunks {
            let found = Array((members[chunk.roomID] ?? []).filter { $0.userID > chunk.after }.prefix(limit))
            guard !found.isEmpty else { continue }
            read.members[chunk] = found
            read.newest[chunk.roomID] = newest[chunk.roomID]
        }
        return read
    }
}

/// The end of a busy window: one summary per member, with their counts, and the pushes of
/// held messages still queued.
struct SummaryFanoutTests {
    let logger = Logger(label: "test")

    func unread(_ user: Int64, _ unread: Int64, _ mentions: Int64 = 0) -> MemberUnread {
        MemberUnread(userID: user, unread: unread, mentions: mentions)
    }

    func decoded(_ copy: String) throws -> (topic: String, summary: NotificationSummary, type: String) {
        let parts = copy.split(separator: " ", maxSplits: 1)
        struct Read: Decodable {
            let type: String
            let data: NotificationSummary
        }
        let read = try JSONCoding.decoder.decode(Read.self, from: Data(parts[1].utf8))
        return (String(parts[0]), read.data, read.type)
    }

    @Test func eachMemberOfEachRoomDueGetsOneSummaryWithTheirCountsInOneRead() async throws {
        let summaries = FakeSummaries(
            members: [1: [unread(10, 0), unread(11, 5, 2)], 2: [unread(20, 1)]],
            newest: [1: .init(seq: 40, message: nil), 2: .init(seq: 7, message: nil)])
        let publisher = RecordingPublisher()
        let handler = FanoutHandler(
            readers: FakeReaders([:]), publisher: publisher, queue: RecordingQueue(), summaries: summaries,
            logger: logger)
        try await handler.handle(
            NotificationSummaryJob(chunks: [.init(roomID: 1, after: 0), .init(roomID: 2, after: 0)]).payload)

        #expect(summaries.asked.withLock { $0.count } == 1)
        #expect(publisher.batches.withLock { $0.count } == 1)
        let copies = try publisher.copies.map(decoded)
        #expect(
            copies.map(\.topic) == [
                "messenger-notifications/10", "messenger-notifications/11", "messenger-notifications/20",
            ])
        #expect(copies.allSatisfy { $0.type == "room-summary" })
        #expect(copies.map(\.summary.unreadCount) == [0, 5, 1])
        #expect(copies.map(\.summary.unreadMentionCount) == [0, 2, 0])
        #expect(copies.map(\.summary.seq) == [40, 40, 7])
    }

    @Test func aRoomLargerThanAChunkQueuesTheRestOnceTheFirstWentOut() async throws {
        let summaries = FakeSummaries(
            members: [1: (1...5).map { unread($0, 1) }], newest: [1: .init(seq: 3, message: nil)])
        let publisher = RecordingPublisher()
        let queue = RecordingQueue()
        let handler = FanoutHandler(
            readers: FakeReaders([:]), publisher: publisher, queue: queue, chunkSize: 2, summaries: summaries,
            logger: logger)
        try await handler.handle(NotificationSummaryJob(room: 1).payload)
        #expect(queue.jobs == ["notification-summary\n1:2\n"])
        try await handler.handle(queue.jobs[0])
        #expect(queue.jobs.last == "notification-summary\n1:4\n")
        try await handler.handle(queue.jobs[1])
        #expect(queue.jobs.count == 2)
        #expect(try publisher.copies.map { try decoded($0).topic } == (1...5).map { "messenger-notifications/\($0)" })
    }

    @Test func aSummaryWhoseReadFailsIsRetriedNotDeadLettered() async throws {
        struct Unavailable: Error {}
        struct FailingSummaries: RoomSummaries {
            func summaries(of chunks: Set<ReaderChunk>, limit: Int) async throws -> SummaryRead { throw Unavailable() }
        }
        let handler = FanoutHandler(
            readers: FakeReaders([:]), publisher: RecordingPublisher(), queue: RecordingQueue(),
            summaries: FailingSummaries(), logger: logger)
        await #expect(throws: Unavailable.self) { try await handler.handle(NotificationSummaryJob(room: 6).payload) }
    }

    @Test func aMalformedSummaryJobIsDeadLetteredAndAHeldMessagesPushesContinueThroughALargeRoom() async throws {
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11, 12]]), publisher: RecordingPublisher(), queue: RecordingQueue(),
            logger: logger)
        await #expect(throws: PermanentJobFailure.self) { try await handler.handle("notification-summary\nx\n") }

        let audience = FakeAudience(devices: [10, 11, 12])
        let pushQueue = RecordingQueue()
        let queue = RecordingQueue()
        let publisher = RecordingPublisher()
        let pushing = FanoutHandler(
            readers: FakeReaders([1: [10, 11, 12]]), publisher: publisher, queue: queue, chunkSize: 2,
            pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)
        let held = newMessageEntry(room: 1, event: "A").made!.withPushesOnly()
        try await pushing.handle(FanoutBatch.encode([FanoutBatch.Entry(held, event: nil)]))
        try await pushing.handle(try #require(queue.jobs.first))
        #expect(publisher.copies.isEmpty)
        let pushed = try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)).userID }
        #expect(pushed.sorted() == [11, 12])
    }

    @Test func theRelayPublishesNoCopiesOfAHeldMessageInAKeptRoom() async throws {
        let readers = FakeReaders([1: [10, 11]])
        let handler = FanoutHandler(
            readers: readers, publisher: RecordingPublisher(), queue: RecordingQueue(), logger: logger)
        try await handler.handle(FanoutBatch.encode([newMessageEntry(room: 1, event: "A", readers: 0)]))
        let held = newMessageEntry(room: 1, event: "B", readers: 0).made!.withPushesOnly()

        let plan = InlineFanout(sharing: handler).plan([FanoutBatch.Entry(held, event: nil)])
        // No copies, and no pushes in this deployment: nothing at all.
        #expect(plan.copies.isEmpty)
        #expect(plan.queued.isEmpty)
    }
}
