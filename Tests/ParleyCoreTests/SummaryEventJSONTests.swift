import Foundation
import Testing

@testable import ParleyCore

/// A room summary written around its message's shared encoding is byte for byte the
/// encoder's, with a message or without one.
struct SummaryEventJSONTests {
    @Test(arguments: ["hello", "quote \" backslash \\ slash / end", "Příliš žluťoučký kůň 🐎 \u{2028}", ""])
    func aSummaryIsTheEncodersByteForByte(_ content: String) throws {
        let message = Message(
            id: 42, seq: 9, chatRoomId: 5, chatRoomUid: "AbC-d_e/F", sentById: 7, content: content,
            uid: "u-\"1\"\\/", fileId: nil, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123),
            replyTo: ReplyPreview(id: 40, seq: 8, sentById: 3, excerpt: "earlier", deleted: false), replyCount: 3,
            mentions: [1, 22])
        for newest in [message, nil] {
            let shared = try newest.map(EncodedMessage.init)
            for (unread, mentions) in [(0, 0), (17, 2)] as [(Int64, Int64)] {
                let summary = NotificationSummary(
                    chatRoomId: 5, seq: 9, message: newest, unreadCount: unread, unreadMentionCount: mentions)
                #expect(
                    RoomEvent.summaryJSON(
                        room: 5, seq: 9, newest: shared, unreadCount: unread, unreadMentionCount: mentions, for: 11)
                        == RoomEvent.summary(summary, for: 11).json())
            }
        }
    }
}
