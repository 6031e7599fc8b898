import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Testing

/// A message's trace context (``PipelineTrace``) travels with its fan-out: from the relay's
/// job to its pushes and to the continuations of a large room. In a process with tracing off
/// (this test's) each step passes on what it was given.
struct TraceCarriageTests {
    let logger = Logger(label: "test")
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    func traced(_ entry: FanoutBatch.Entry) -> FanoutBatch.Entry { entry.continuing(traceparent) }

    @Test func theRelaysEntryCarriesItsSpanOnlyInAJobItMade() throws {
        let made = traced(newMessageEntry(room: 1, event: "A"))
        #expect(made.made?.traceparent == traceparent)
        #expect(try FanoutBatch.decode(FanoutBatch.encode([made])).map(\.traceparent) == [traceparent])
        // A job stored with its event (a change, not a message) is passed on as it was stored.
        let stored = FanoutBatch.Entry(job: FanoutJob(roomID: 1, event: "", audience: .users).json(), event: "x")
        #expect(traced(stored).job == stored.job)
        #expect(newMessageEntry(room: 1, event: "A").continuing(nil).made?.traceparent == nil)
    }

    @Test func pushesAndContinuationsCarryTheTraceOfTheirMessage() async throws {
        let queue = RecordingQueue()
        let pushQueue = RecordingQueue()
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11, 12]]), publisher: RecordingPublisher(), queue: queue, chunkSize: 2,
            pushes: PushFanout(audience: FakeAudience(devices: [11]), queue: pushQueue), logger: logger)

        try await handler.handle(FanoutBatch.encode([traced(newMessageEntry(room: 1, event: "A"))]))

        let pushes = try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)) }
        #expect(pushes.map(\.userID) == [11])
        #expect(pushes.map(\.traceparent) == [traceparent])
        let continuations = try queue.jobs.map { try FanoutBatch.decode($0) }.joined()
        #expect(continuations.map(\.afterUserID) == [11])
        #expect(continuations.map(\.traceparent) == [traceparent])
    }

    @Test func theRelaysOwnCopiesLeaveAPushesOnlyJobOnTheSameTrace() async throws {
        let handler = FanoutHandler(
            readers: FakeReaders([1: [10, 11]]), publisher: RecordingPublisher(), queue: RecordingQueue(),
            pushes: PushFanout(audience: FakeAudience(devices: [11]), queue: RecordingQueue()), logger: logger)
        // The room's first message keeps its readers.
        try await handler.handle(FanoutBatch.encode([newMessageEntry(room: 1, event: "A", readers: 0, tokens: 1)]))

        let plan = InlineFanout(sharing: handler).plan([
            traced(newMessageEntry(room: 1, event: "B", readers: 0, tokens: 1))
        ])
        #expect(plan.copies.count == 2)
        #expect(plan.queued.compactMap(\.made).map(\.pushesOnly) == [true])
        #expect(plan.queued.compactMap(\.made).map(\.traceparent) == [traceparent])
    }
}
