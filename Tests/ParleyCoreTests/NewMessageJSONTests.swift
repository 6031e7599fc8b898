import Foundation
import Testing

@testable import ParleyCore

/// The relay's direct writing of a plain message's event is the encoder's, byte for byte.
struct NewMessageJSONTests {
    private func message(
        content: String, sentById: Int64? = 7, editedAt: Date? = nil, deletedAt: Date? = nil,
        deletedById: Int64? = nil, mentions: [Int64] = [], replyTo: ReplyPreview? = nil,
        reactions: [ReactionSummary] = []
    ) -> Message {
        Message(
            id: 123_456_789_012, seq: 42, chatRoomId: 9, chatRoomUid: "room-\"uid\"/1", sentById: sentById,
            content: content, uid: "u-1\\2", fileId: nil, createdAt: Date(timeIntervalSince1970: 1_795_000_000.123),
            editedAt: editedAt, deletedAt: deletedAt, deletedById: deletedById, replyTo: replyTo, replyCount: 3,
            mentions: mentions, reactions: reactions)
    }

    private func encoded(_ message: Message) -> String { RoomEvent.newMessage(message).json() }

    @Test func everyCharacterIsEscapedAsTheEncoderDoes() {
        let ascii = String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init)))
        let others =
            "Příliš žluťoučký kůň úpěl ďábelské ódy — Ünïcödé, кириллица, 日本語, 🙂👍🏽, \u{2028}\u{2029}\u{FEFF}\u{7F}"
        for content in [ascii, others, "", "a/b\\c\"d", String(repeating: "\u{1}\n", count: 50)] {
            let plain = message(content: content)
            #expect(NewMessageJSON.encode(RoomEvent.newMessage(plain)) == encoded(plain))
        }
    }

    @Test func everyOptionalFieldIsWrittenAsTheEncoderDoes() {
        let at = Date(timeIntervalSince1970: 1_795_000_100.5)
        for variant in [
            message(content: "x", sentById: nil),
            message(content: "x", editedAt: at),
            message(content: "x", deletedAt: at, deletedById: 7),
            message(content: "x", mentions: [1]),
            message(content: "x", mentions: [3, 1, 9_007_199_254_740_993]),
        ] {
            #expect(NewMessageJSON.encode(RoomEvent.newMessage(variant)) == encoded(variant))
            #expect(RoomEvent.newMessageJSON(variant) == encoded(variant))
        }
    }

    @Test func aReplyOrReactionsGoThroughTheEncoder() {
        let reply = message(
            content: "x", replyTo: ReplyPreview(id: 1, seq: 1, sentById: 2, excerpt: "hi", deleted: false))
        let reacted = message(content: "x", reactions: [ReactionSummary(key: "👍", count: 2)])
        for variant in [reply, reacted] {
            #expect(NewMessageJSON.encode(RoomEvent.newMessage(variant)) == nil)
            #expect(RoomEvent.newMessageJSON(variant) == encoded(variant))
        }
    }
}
