import ParleyCore
import Testing

/// A busy room's notification copies: the first at once, the rest held for one summary per
/// window; a quiet room's every copy at once.
struct NotificationWindowsTests {
    let start = ContinuousClock.now
    let windows = NotificationWindows(length: .seconds(1))

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aQuietRoomsMessagesEachGoAtOnce() {
        #expect(windows.admit(room: 1, at: at(0)) == .now)
        #expect(windows.due(at: at(1_000)).isEmpty)
        #expect(windows.openCount == 0)
        #expect(windows.admit(room: 1, at: at(1_500)) == .now)
        #expect(windows.admit(room: 1, at: at(2_600)) == .now)
    }

    @Test func aBusyRoomHoldsItsMessagesForOneSummaryPerWindow() {
        #expect(windows.admit(room: 1, at: at(0)) == .now)
        #expect(windows.admit(room: 1, at: at(100)) == .held)
        #expect(windows.admit(room: 1, at: at(900)) == .held)
        #expect(windows.due(at: at(999)).isEmpty)
        #expect(windows.due(at: at(1_000)) == [1])
        // Still busy: the next window opened when the summary went, and holds too.
        #expect(windows.admit(room: 1, at: at(1_200)) == .held)
        #expect(windows.due(at: at(1_999)).isEmpty)
        #expect(windows.due(at: at(2_000)) == [1])
        // Quiet for a window: it closes, and the next message goes at once.
        #expect(windows.due(at: at(3_000)).isEmpty)
        #expect(windows.openCount == 0)
        #expect(windows.admit(room: 1, at: at(3_100)) == .now)
    }

    @Test func aMessageSeenAfterItsWindowEndedBeforeTheSummaryWasTakenJoinsThatSummary() {
        #expect(windows.admit(room: 1, at: at(0)) == .now)
        #expect(windows.admit(room: 1, at: at(10)) == .held)
        // The release is late: the summary it takes is read after this message was stored.
        #expect(windows.admit(room: 1, at: at(1_050)) == .held)
        #expect(windows.due(at: at(1_060)) == [1])
        #expect(windows.due(at: at(2_060)).isEmpty)
    }

    @Test func roomsHaveWindowsOfTheirOwnAndAreDueInTheOrderTheirWindowsEnd() {
        #expect(windows.admit(room: 1, at: at(0)) == .now)
        #expect(windows.admit(room: 2, at: at(300)) == .now)
        #expect(windows.admit(room: 2, at: at(400)) == .held)
        #expect(windows.admit(room: 1, at: at(500)) == .held)
        #expect(windows.admit(room: 3, at: at(600)) == .now)
        #expect(windows.nextEnd == at(1_000))
        #expect(windows.due(at: at(1_000)) == [1])
        #expect(windows.nextEnd == at(1_300))
        #expect(windows.due(at: at(1_700)) == [2])
        #expect(windows.openCount == 2)
    }

    @Test func aBatchKeepsItsOtherJobsAndTheHeldMessagesPushes() {
        let push = PushIntent(reason: .message, actorID: 10, content: "hi")
        func message(_ room: Int64, pushes: Bool = true) -> FanoutBatch.Entry {
            FanoutBatch.Entry(
                FanoutJob(roomID: room, event: "", audience: .readers, push: pushes ? push : nil, readersVersion: 1),
                event: "m\(room)")
        }
        let change = FanoutBatch.Entry(
            job: FanoutJob(roomID: 1, event: "", audience: .users, userIDs: [11]).json(), event: "added")
        let first = windows.admit([message(1), message(2)], at: at(0))
        #expect(first.entries.map(\.event) == ["m1", "m2"])
        #expect(first.held.isEmpty)

        let busy = windows.admit([message(1), change, message(1, pushes: false), message(2)], at: at(10))
        #expect(busy.held == [1, 2])
        // The room change goes; room 1's first held message leaves its pushes, its second
        // pushes nobody and leaves nothing; room 2's leaves its pushes.
        #expect(busy.entries.map(\.event) == [nil, "added", nil])
        #expect(busy.entries.compactMap(\.made).map(\.pushesOnly) == [true, true])
        #expect(busy.entries.compactMap(\.made).map(\.roomID) == [1, 2])
        #expect(busy.entries.compactMap(\.made).allSatisfy { $0.push == push && $0.readersVersion == 1 })
    }

    @Test func summaryJobsRoundTripAndJoinByTheirLines() throws {
        let job = NotificationSummaryJob(chunks: [.init(roomID: 7, after: 0), .init(roomID: 9, after: 500)])
        #expect(job.payload == "notification-summary\n7:0\n9:500\n")
        #expect(try NotificationSummaryJob(payload: job.payload) == job)
        let marker = NotificationSummaryJob.marker
        let lines = [7, 9].map { NotificationSummaryJob(room: $0).payload.dropFirst(marker.count) }
        let joined = marker + lines.joined()
        #expect(try NotificationSummaryJob(payload: joined)?.chunks.map(\.roomID) == [7, 9])
        // Not a summary: a fan-out job or batch.
        #expect(try NotificationSummaryJob(payload: "{\"roomID\":1}") == nil)
        for malformed in [
            "notification-summary\n", "notification-summary\n7\n", "notification-summary\nx:0\n",
            "notification-summary\n0:0\n", "notification-summary\n7:-1\n",
        ] {
            #expect(throws: FanoutBatchError.self) { try NotificationSummaryJob(payload: malformed) }
        }
    }

    @Test func aSummaryHasOneHashForOneStateAndNamesItsType() throws {
        let summary = NotificationSummary(chatRoomId: 7, seq: 12, message: nil, unreadCount: 3, unreadMentionCount: 1)
        let envelope = RoomEvent.summary(summary, for: 10)
        #expect(envelope.type == "room-summary")
        #expect(envelope.hash == RoomEvent.summary(summary, for: 10).hash)
        #expect(envelope.hash != RoomEvent.summary(summary, for: 11).hash)
        let read = NotificationSummary(chatRoomId: 7, seq: 12, message: nil, unreadCount: 0, unreadMentionCount: 0)
        #expect(envelope.hash != RoomEvent.summary(read, for: 10).hash)
        #expect(envelope.json().contains(#""unreadMentionCount":1"#))
    }
}

extension NotificationWindowsTests {
    @Test func aWindowsSummaryIsParkedOnceAndItsSuccessorParksItsOwn() {
        #expect(windows.admit(room: 1, at: at(0)) == .now)
        #expect(windows.unparked([1]).isEmpty)
        #expect(windows.admit(room: 1, at: at(10)) == .held)
        let first = windows.unparked([1])
        #expect(first.map(\.room) == [1])
        // Until its batch's jobs were handed on, every batch that holds one parks it again.
        #expect(windows.unparked([1]) == first)
        windows.markParked(first)
        #expect(windows.admit(room: 1, at: at(20)) == .held)
        #expect(windows.unparked([1]).isEmpty)

        #expect(windows.due(at: at(1_000)) == [1])
        #expect(windows.admit(room: 1, at: at(1_100)) == .held)
        // A mark meant for the window that ended does not reach its successor.
        windows.markParked(first)
        #expect(windows.unparked([1]).map(\.room) == [1])
    }
}
