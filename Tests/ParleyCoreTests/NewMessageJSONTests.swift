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

    /// Bytes, not `String`'s `==`, which compares by Unicode equivalence.
    private func encoded(_ message: Message) -> [UInt8] { Array(RoomEvent.newMessage(message).json().utf8) }
    private func direct(_ message: Message) -> [UInt8]? {
        NewMessageJSON.encode(RoomEvent.newMessage(message)).map { Array($0.utf8) }
    }

    @Test func everyCharacterIsEscapedAsTheEncoderDoes() {
        let ascii = String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init)))
        let others =
            "Příliš žluťoučký kůň úpěl ďábelské ódy — Ünïcödé, кириллица, 日本語, 🙂👍🏽, \u{2028}\u{2029}\u{FEFF}\u{7F}"
        let joined = "\r\n\u{301}e\u{301}\n\u{308}\"\u{20DD}"
        for content in [ascii, others, joined, "", "a/b\\c\"d", String(repeating: "\u{1}\n", count: 50)] {
            let plain = message(content: content)
            #expect(direct(plain) == encoded(plain))
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
            #expect(direct(variant) == encoded(variant))
            #expect(Array(RoomEvent.newMessageJSON(variant).utf8) == encoded(variant))
        }
    }

    @Test func aReplyOrReactionsGoThroughTheEncoder() {
        let reply = message(
            content: "x", replyTo: ReplyPreview(id: 1, seq: 1, sentById: 2, excerpt: "hi", deleted: false))
        let reacted = message(content: "x", reactions: [ReactionSummary(key: "👍", count: 2)])
        for variant in [reply, reacted] {
            #expect(direct(variant) == nil)
            #expect(Array(RoomEvent.newMessageJSON(variant).utf8) == encoded(variant))
        }
    }
}
