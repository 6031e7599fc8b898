import Foundation
import ParleyCore
import Testing

/// The contract's objects name every key, an empty one as `null` (``NullEncoded``); a few
/// keys are left out when empty instead, as the documents say.
struct NullEncodedTests {
    func json(_ value: some Encodable) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: JSONCoding.encoder.encode(value)) as? [String: Any])
    }

    @Test func anEmptyKeyIsWrittenAsNullAndTheOmittedOnesAreLeftOut() throws {
        let message = Message(
            id: 1, seq: 2, chatRoomId: 3, chatRoomUid: "room", sentById: nil, content: "hi", uid: "u", fileId: nil,
            createdAt: Date(timeIntervalSince1970: 0))
        let object = try json(message)
        for key in ["sentById", "editedAt", "deletedAt", "deletedById", "replyTo"] {
            #expect(object[key] is NSNull, "\(key): \(String(describing: object[key]))")
        }
        #expect(object["file"] == nil && object["fileId"] == nil, "\(object.keys.sorted())")
        #expect(object["createdAt"] as? String == "1970-01-01T00:00:00.000Z")

        let rejection = try json(
            RoomEvent.rejected(roomID: nil, uid: nil, code: .invalidRequest, reason: "no", hash: nil).data)
        #expect(rejection["chatRoomId"] is NSNull && rejection["uid"] is NSNull)
        #expect(rejection["retryAfter"] == nil, "retryAfter is only written with a value")
    }

    @Test func aValueIsWrittenAsItselfAndBothNullAndAnAbsentKeyReadAsNil() throws {
        let edited = Date(timeIntervalSince1970: 1_000)
        let message = Message(
            id: 1, seq: 2, chatRoomId: 3, chatRoomUid: "room", sentById: 7, content: "hi", uid: "u", fileId: nil,
            createdAt: Date(timeIntervalSince1970: 0), editedAt: edited)
        let object = try json(message)
        #expect(object["sentById"] as? Int == 7)
        #expect(object["editedAt"] as? String == "1970-01-01T00:16:40.000Z")
        #expect(try JSONCoding.decoder.decode(Message.self, from: JSONCoding.encoder.encode(message)) == message)

        let sparse =
            #"{"id":1,"seq":2,"chatRoomId":3,"chatRoomUid":"room","content":"hi","uid":"u","#
            + #""createdAt":"1970-01-01T00:00:00.000Z","editedAt":null}"#
        let read = try JSONCoding.decoder.decode(Message.self, from: Data(sparse.utf8))
        #expect(read.sentById == nil && read.editedAt == nil && read.deletedAt == nil)
        // A synthesized decoder too (not Message's own): the absent key reads as nil.
        let preview = try JSONCoding.decoder.decode(
            ReplyPreview.self, from: Data(#"{"id":1,"seq":2,"excerpt":"x","deleted":false}"#.utf8))
        #expect(preview.sentById == nil)
    }
}
