import Foundation
import ParleyCore
import Testing

/// A message's receipts from its room's marks: other members only, reading implies receiving,
/// a hidden read counts as received only.
struct RoomMarksTests {
    func message(seq: Int64, by sender: Int64?) -> Message {
        Message(
            id: seq, seq: seq, chatRoomId: 1, chatRoomUid: "u", sentById: sender, content: "m", uid: "m-\(seq)",
            fileId: nil, createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test func countsOtherMembersWhoReceivedAndReadIt() {
        let marks = RoomMarks(members: [
            .init(userID: 1, delivered: 9, read: 9),  // the sender: never counted
            .init(userID: 2, delivered: 0, read: 5),  // read implies received
            .init(userID: 3, delivered: 7, read: 2),
            .init(userID: 4, delivered: 8, read: nil),  // shares no read state
            .init(userID: 5, delivered: 0, read: 0),
        ])
        #expect(marks.receipts(of: message(seq: 5, by: 1)) == MessageReceipts(delivered: 3, read: 1))
        #expect(marks.receipts(of: message(seq: 2, by: 1)) == MessageReceipts(delivered: 3, read: 2))
        #expect(marks.receipts(of: message(seq: 9, by: 1)) == MessageReceipts.none)
        #expect(marks.receipts(of: message(seq: 5, by: 3)) == MessageReceipts(delivered: 3, read: 2))
        // The app's server's notice has no sender: every member counts.
        #expect(marks.receipts(of: message(seq: 1, by: nil)) == MessageReceipts(delivered: 4, read: 3))
    }

    @Test func aMessageWithoutReceiptsSaysNullAndOneWithThemSaysBoth() throws {
        var plain = message(seq: 1, by: 1)
        #expect(String(decoding: try JSONCoding.encoder.encode(plain), as: UTF8.self).contains(#""receipts":null"#))
        plain.receipts = MessageReceipts(delivered: 2, read: 1)
        let text = String(decoding: try JSONCoding.encoder.encode(plain), as: UTF8.self)
        #expect(text.contains(#""receipts":{"delivered":2,"read":1}"#))
        #expect(try JSONCoding.decoder.decode(Message.self, from: Data(text.utf8)) == plain)
    }
}
