import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

@testable import parley

/// A busy room with a member outside it (subscribed to their notification topic only): one
/// copy at once, then one summary per window whose counts are the room list's.
extension DeliveryEndToEndTests {
    @Test(arguments: [false, true])
    func aBusyRoomsMemberOutsideItGetsTheFirstCopyThenASummaryWithTheRoomListsCounts(inline: Bool) async throws {
        let window = Duration.milliseconds(1_500)
        try await withPipeline(inline: inline, window: window) { client, subscriber in
            let users = try await client.signUp(count: 3)
            let (roomID, uid) = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "Busy",
                firstMessage: ("hi", "w-0"))
            // The room's first message opened a window; once it has passed, the room is quiet.
            try await Task.sleep(for: window + .milliseconds(300))
            let outside = Topic.notifications(userID(users[1]))
            try await subscriber.subscribe(outside)

            let first = try await client.send("one", uid: "w-1", to: roomID, as: users[0])
            try await client.send("two", uid: "w-2", to: roomID, as: users[0])
            let mention = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(roomID)/messages", token: token(users[0]),
                body: #"{"content":"@you","uid":"w-3","mentions":[\#(userID(users[1]))]}"#)
            let gone = try await client.send("gone", uid: "w-4", to: roomID, as: users[0])
            #expect(
                try await client.json(.delete, "/v1/rooms/\(roomID)/messages/\(gone.id)", token: token(users[0]))
                    .status == .noContent)
            let last = try await client.send("last", uid: "w-5", to: roomID, as: users[0])

            // Topics repeat across tests (each has a database of its own): the room's uid
            // tells this test's copies apart.
            var copies: [Int64] = []
            var summaries: [NotificationSummary] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, summaries.last?.seq != last.seq {
                guard let message = await MessageInbox.of(subscriber).next(within: .milliseconds(200)),
                    message.topic == outside
                else { continue }
                if let copy = try? JSONCoding.decoder.decode(Envelope<Message>.self, from: Data(message.payload)),
                    copy.type == "new-message-notification", copy.data.chatRoomUid == uid
                {
                    copies.append(copy.data.seq)
                } else if let summary = try? JSONCoding.decoder.decode(
                    Envelope<NotificationSummary>.self, from: Data(message.payload)),
                    summary.type == "room-summary", summary.data.message?.chatRoomUid == uid
                {
                    summaries.append(summary.data)
                }
            }
            // The quiet room's first message at once; the rest only in the summary.
            #expect(copies == [first.seq])
            let summary = try #require(summaries.last)
            #expect(summary.seq == last.seq && summary.message?.id == last.id && summary.chatRoomId == Int64(roomID))
            // seq 1 to 6, less the deleted one; one mention.
            #expect(summary.unreadCount == 5 && summary.unreadMentionCount == 1)
            #expect(mention.mentions == [userID(users[1])])

            // Exactly what the room list says.
            let rooms = try await client.json(.get, "/v1/rooms", token: token(users[1]))
            let listed = try #require(
                (rooms.json["rooms"] as? [[String: Any]])?.first { ($0["id"] as? Int) == roomID })
            #expect(listed["unreadCount"] as? Int == Int(summary.unreadCount))
            #expect(listed["unreadMentionCount"] as? Int == Int(summary.unreadMentionCount))
            #expect(listed["lastSeq"] as? Int == Int(summary.seq))
            // Outside the room, the gap since the copy is in the history.
            let gap = try await client.history(roomID, "after=\(first.seq)", as: users[1])
            #expect(gap.messages.map(\.seq).sorted() == Array((first.seq + 1)...last.seq))
        }
    }
}
