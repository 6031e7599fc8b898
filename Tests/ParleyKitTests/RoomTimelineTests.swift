import Foundation
import Testing

@testable import ParleyKit

/// ``RoomTimeline``: a room's new messages told once each, in seq order, whatever way they came.
struct RoomTimelineTests {
    func message(_ seq: Int) -> ParleyMessage {
        let json = """
            {"id":\(seq + 1000),"seq":\(seq),"chatRoomId":7,"chatRoomUid":"room-uid-0123456789","sentById":1,
             "content":"m\(seq)","uid":"u\(seq)","type":"text","createdAt":"2026-11-30T05:00:00.000Z",
             "editedAt":null,"deletedAt":null,"deletedById":null,"replyTo":null,"replyCount":0,"mentions":[],
             "reactions":[],"attachments":[],"metadata":null,"receipts":null}
            """
        return try! ContractJSON.decoder.decode(ParleyMessage.self, from: Data(json.utf8))
    }

    @Test func theNextSeqIsToldAtOnceAndARepeatNever() {
        var timeline = RoomTimeline(told: 4)
        let first = timeline.take(message(5))
        let again = timeline.take(message(5))
        let older = timeline.take(message(3))
        #expect(first.map(\.seq) == [5] && again.isEmpty)
        #expect(older.isEmpty, "history before the start is not told")
        #expect(!timeline.hasGap && timeline.told == 5)
    }

    @Test func aMessageBeyondAGapWaitsUntilTheGapIsFilledThenAllComeInOrder() {
        var timeline = RoomTimeline(told: 0)
        let beyond = timeline.take(message(3)) + timeline.take(message(4))
        #expect(beyond.isEmpty && timeline.hasGap && timeline.newestHeld == 4)
        let one = timeline.take(message(1))
        let rest = timeline.take(message(2))
        #expect(one.map(\.seq) == [1] && rest.map(\.seq) == [2, 3, 4])
        #expect(!timeline.hasGap)
    }

    @Test func aFetchFillsTheGapAndSkipsWhatTheHistoryNoLongerHas() {
        var timeline = RoomTimeline(told: 0)
        _ = timeline.take(message(5))
        _ = timeline.take(message(9))
        // The history has 1, 2 and 5 (3 and 4 purged) up to the mark 5; 9 arrived after.
        let told = timeline.fill(with: [message(1), message(2), message(5)], through: 5)
        #expect(told.map(\.seq) == [1, 2, 5])
        #expect(timeline.hasGap && timeline.told == 5, "9 waits: 6 to 8 may still come")
        let rest = timeline.fill(with: [message(6), message(7), message(8), message(9)], through: 9)
        #expect(rest.map(\.seq) == [6, 7, 8, 9] && !timeline.hasGap)
    }

    @Test func aMessageToldFromTheHistoryIsNotToldAgainWhenItsEventComes() {
        var timeline = RoomTimeline(told: 0)
        _ = timeline.take(message(2))
        let filled = timeline.fill(with: [message(1), message(2)], through: 2)
        let repeats = timeline.take(message(1)) + timeline.take(message(2))
        let next = timeline.take(message(3))
        #expect(filled.map(\.seq) == [1, 2] && repeats.isEmpty && next.map(\.seq) == [3])
    }
}

/// ``RecentKeys`` drops a repeat within its capacity and forgets the oldest beyond it.
struct RecentKeysTests {
    @Test func aRepeatIsDroppedUntilItIsForgotten() {
        var keys = RecentKeys(capacity: 2)
        let inserted = [keys.insert("a"), keys.insert("a"), keys.insert("b"), keys.insert("c")]
        #expect(inserted == [true, false, true, true])
        let forgotten = keys.insert("a")
        let kept = keys.insert("c")
        #expect(forgotten, "the oldest was forgotten")
        #expect(!kept)
    }
}
