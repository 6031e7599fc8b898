import Foundation
import ParleyCore
import Testing

/// The one reading of a message's fields, as REST bodies and `chat-in` data give them.
@Suite struct NewMessageTests {
    private func decode(_ json: String) throws -> NewMessage {
        try JSONCoding.decoder.decode(NewMessage.self, from: Data(json.utf8))
    }

    private func refusedField(_ json: String) -> String? {
        do {
            _ = try decode(json)
            return nil
        } catch let error as ParleyError {
            return error.field
        } catch {
            return "\(error)"
        }
    }

    @Test func aFileIdIsOneAttachmentAndAFileAloneNeedsNoContent() throws {
        let message = try decode(#"{"uid":"u","fileId":7}"#)
        #expect(message.attachments == [7] && message.fileId == 7 && message.content.isEmpty)
        #expect(!message.isPlain)
        #expect(try decode(#"{"content":"hi","uid":"u"}"#).isPlain)
        #expect(try decode(#"{"content":"hi","uid":"u","type":"text"}"#).isPlain)
        #expect(try !decode(#"{"content":"hi","uid":"u","type":"x-a"}"#).isPlain)
        #expect(try !decode(#"{"content":"hi","uid":"u","metadata":{}}"#).isPlain)
    }

    @Test func typesAreTextOrTheAppsOwn() {
        for accepted in ["text", "x-a", "x-poll.v2", "x-" + String(repeating: "z", count: 62)] {
            #expect(refusedField(#"{"content":"c","uid":"u","type":"\#(accepted)"}"#) == nil, "\(accepted)")
        }
        for refused in ["system", "x-", "x-A", "x-a b", "poll", "x-" + String(repeating: "z", count: 63), ""] {
            #expect(refusedField(#"{"content":"c","uid":"u","type":"\#(refused)"}"#) == "type", "\(refused)")
        }
    }

    @Test func metadataIsAnObjectOfAtMostEightLevelsAndEightKiB() throws {
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":\#(RichMessageLimits.nested(8))}"#) == nil)
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":\#(RichMessageLimits.nested(9))}"#) == "metadata")
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":null}"#) == nil)
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":true}"#) == "metadata")
        let fits = String(repeating: "a", count: 8192 - #"{"a":""}"#.utf8.count)
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":{"a":"\#(fits)"}}"#) == nil)
        #expect(refusedField(#"{"content":"c","uid":"u","metadata":{"a":"\#(fits)a"}}"#) == "metadata")
        let metadata = try #require(try decode(#"{"content":"c","uid":"u","metadata":{"n":1.5,"i":-3}}"#).metadata)
        #expect(try MessageMetadata(json: metadata.json) == metadata)
        #expect(metadata.members == ["n": .number(1.5), "i": .integer(-3)])
    }

    @Test func attachmentsAreAtMostTenDistinctAndNotBesideAFileId() {
        #expect(refusedField(#"{"uid":"u","attachments":[1,2,3,4,5,6,7,8,9,10]}"#) == nil)
        #expect(refusedField(#"{"uid":"u","attachments":[1,2,3,4,5,6,7,8,9,10,11]}"#) == "attachments")
        #expect(refusedField(#"{"uid":"u","attachments":[3,3]}"#) == "attachments")
        #expect(refusedField(#"{"uid":"u","fileId":1,"attachments":[2]}"#) == "attachments")
        #expect(refusedField(#"{"uid":"u","attachments":[]}"#) == "content")
    }

    @Test func aChatInMessageOfTheWrongShapeIsTheClientsMistake() throws {
        for (data, field) in [
            (#"{"uid":"u","content":5}"#, "data.content"), (#"{"uid":"u","content":"x","fileId":"7"}"#, "data.fileId"),
            (#"{"uid":"u","content":"x","mentions":[1.5]}"#, "data"),
            (#"{"uid":"u","content":"\ud800"}"#, "data"),
        ] {
            let payload = #"{"type":"new-message-notification","data":\#(data),"hash":"h"}"#
            let envelope = try JSONCoding.decoder.decode(ClientEnvelope.self, from: Data(payload.utf8))
            #expect(envelope.data.uid == "u")
            let error = #expect(throws: ParleyError.self) { _ = try envelope.message?.get() }
            #expect(error?.code == .invalidRequest, "\(data)")
            #expect(error?.field?.hasPrefix(field) == true, "\(data): \(String(describing: error?.field))")
        }
    }

    @Test func errorsNameTheFieldByItsPathInTheBody() throws {
        struct Body: Decodable { let firstMessage: NewMessage }
        let error = #expect(throws: ParleyError.self) {
            _ = try JSONCoding.decoder.decode(Body.self, from: Data(#"{"firstMessage":{"content":"c"}}"#.utf8))
        }
        #expect(error?.field == "firstMessage.uid")
    }
}

enum RichMessageLimits {
    /// `levels` of nesting, objects and arrays in turn, the outer one an object.
    static func nested(_ levels: Int) -> String {
        var json = "1"
        for level in (1...levels).reversed() { json = level % 2 == 0 ? "[\(json)]" : #"{"k":\#(json)}"# }
        return json
    }
}
