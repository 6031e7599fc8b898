import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Testing

/// A read's silent update goes to the reader's own devices only: the first at once, a burst's
/// last after the interval (or when the process stops), never one per read.
struct ReadUpdateTests {
    let logger = Logger(label: "test")

    func read(_ seq: Int64, by reader: Int64, in room: Int64 = 1) -> String {
        FanoutJob(
            roomID: room, event: #"{"type":"notification-cleared"}"#, audience: .users, userIDs: [reader],
            push: PushIntent(reason: .read, actorID: reader, seq: seq)
        ).json()
    }

    @Test func aBurstOfReadsSendsTheFirstAtOnceAndTheLastOnceMore() async throws {
        let pushQueue = RecordingQueue()
        let pushes = PushFanout(
            audience: FakeAudience(devices: [10, 11]), queue: pushQueue, readInterval: .seconds(60))
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11]]), publisher: RecordingPublisher(), queue: RecordingQueue(),
            pushes: pushes, logger: logger)
        let updates = Task { try await pushes.readUpdates.run() }
        func sent() throws -> [PushJob] {
            try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)) }
        }

        try await handler.handle(read(3, by: 10))
        for _ in 0..<100 where try sent().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await handler.handle(read(4, by: 10))
        try await handler.handle(read(5, by: 10))
        try await Task.sleep(for: .milliseconds(200))
        #expect(try sent().map(\.notification.seq) == [3])
        // Stopping sends what waits: the last read.
        updates.cancel()
        try await updates.value
        let jobs = try sent()
        #expect(jobs.map(\.notification.seq) == [3, 5])
        #expect(jobs.allSatisfy { $0.userID == 10 && $0.notification.reason == .read })
        #expect(jobs.allSatisfy { $0.notification.title == nil && $0.notification.body == nil })
        #expect(jobs.first?.notification.data["type"] == "read")
    }
}
