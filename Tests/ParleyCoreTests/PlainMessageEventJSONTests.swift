import Foundation
import Testing

@testable import ParleyCore

/// The hand-written event of a plain message is byte for byte the encoder's, whatever its
/// text holds; any other message is the encoder's own.
struct PlainMessageEventJSONTests {
    func encoded(_ envelope: Envelope<Message>) -> String {
        String(decoding: try! JSONCoding.encoder.encode(envelope), as: UTF8.self)
    }

    func message(_ content: String, sender: Int64? = 7, receipts: MessageReceipts? = .none) -> Message {
        Message(
            id: 42, seq: 9, chatRoomId: 5, chatRoomUid: "AbC-d_e/F", sentById: sender, content: content,
            uid: "u-\"1\"\\/", fileId: nil, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123),
            editedAt: Date(timeIntervalSince1970: 1_700_000_100.5), deletedAt: nil, deletedById: nil, replyCount: 3,
            mentions: [1, 22], receipts: receipts)
    }

    @Test(arguments: [
        "hello", "", "quote \" backslash \\ slash / end", "line\nbreak\ttab\r\u{8}\u{c}", "crlf\r\n", "é\u{301}\"",
        "controls \u{0}\u{1}\u{1f}\u{7f}", "Příliš žluťoučký kůň 🐎 \u{2028}\u{2029}", "<script>&amp;</script>",
    ])
    func aPlainMessagesEventIsTheEncodersByteForByte(_ content: String) {
        for sender in [7, nil] as [Int64?] {
            for receipts in [MessageReceipts.none, MessageReceipts(delivered: 2, read: 1), nil] {
                let envelope = RoomEvent.newMessage(message(content, sender: sender, receipts: receipts))
                #expect(PlainMessageEventJSON.encode(envelope) == encoded(envelope))
            }
        }
        var deleted = message(content)
        deleted.deletedAt = Date(timeIntervalSince1970: 1_700_000_200)
        deleted.deletedById = 7
        let envelope = Envelope(type: "message-edited", data: deleted, identity: "x")
        #expect(envelope.json() == encoded(envelope))
    }

    @Test func anyOtherMessageIsLeftToTheEncoder() {
        var reacted = message("hi")
        reacted.reactions = [ReactionSummary(key: "👍", count: 1)]
        #expect(PlainMessageEventJSON.encode(RoomEvent.newMessage(reacted)) == nil)
        #expect(RoomEvent.newMessage(reacted).json() == encoded(RoomEvent.newMessage(reacted)))
        var replying = message("hi")
        replying.replyTo = ReplyPreview(id: 1, seq: 1, sentById: 2, excerpt: "x", deleted: false)
        #expect(PlainMessageEventJSON.encode(RoomEvent.newMessage(replying)) == nil)
    }
}
