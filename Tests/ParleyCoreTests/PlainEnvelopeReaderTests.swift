import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyCore

/// What the reader answers is what `JSONDecoder` answers, field for field and refusal for
/// refusal; whatever it cannot answer alike is left to the decoder.
struct PlainEnvelopeReaderTests {
    /// An envelope as text: every field, and the message or its refusal.
    static func summary(_ envelope: ClientEnvelope?) -> String {
        guard let envelope else { return "none" }
        let data = envelope.data
        let notice = [
            data.chatRoomId.map(String.init), data.uid, data.messageId.map(String.init), data.seq.map(String.init),
            data.creating.map(String.init), data.time,
        ].map { $0.map { "\"\($0)\"" } ?? "nil" }
        let message: String =
            switch envelope.message {
            case .success(let message)?: "\(message)"
            case .failure(let error as ParleyError)?: "refused \(error.code) \(error.field ?? "-") \(error.detail)"
            case .failure(let error)?: "failed \(error)"
            case nil: "no message"
            }
        return "\(envelope.type) \(notice) \(envelope.hash.map { "\"\($0)\"" } ?? "nil") \(message)"
    }

    static func decoded(_ payload: [UInt8]) -> ClientEnvelope? {
        try? JSONCoding.decoder.decode(ClientEnvelope.self, from: Data(payload))
    }

    static let answered = [
        #"{"type":"new-message-notification","data":{"chatRoomId":5,"content":"Hello","uid":"u-1"},"hash":"u-1"}"#,
        #" { "hash" : null , "data" : { "uid" : "u" , "content" : "a\nb" } , "type" : "new-message-notification" } "#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"q\" b\\ s\/ \b\f\n\r\t \u00e9 \uD83D\uDC0E 🐎 ž"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"","attachments":[3, 4],"replyToId":9}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","mentions":[1,2,1,-0],"type":"x-poll"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":7,"metadata":null}}"#,
        #"{"type":"new-message-notification","data":{"uid":"","content":"x"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","type":"system"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":1,"attachments":[2]}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","attachments":[1,1]}}"#,
        #"{"type":"new-message-notification","data":{}}"#,
        #"{"type":"read-message-notification","data":{"chatRoomId":5,"messageId":9223372036854775807},"hash":"h"}"#,
        #"{"type":"creating-message-info","data":{"chatRoomId":-9223372036854775808,"creating":true,"time":"2026-12-03T10:00:00.000Z"}}"#,
        #"{"type":"creating-message-info","data":{"creating":false,"seq":0}}"#,
    ]

    @Test(arguments: answered)
    func whatTheReaderAnswersIsTheDecodersAnswer(_ payload: String) throws {
        let bytes = Array(payload.utf8)
        try StrictJSON.check(bytes)
        let read = PlainEnvelopeReader.read(bytes)
        #expect(read != nil, "the reader answers \(payload)")
        #expect(Self.summary(read) == Self.summary(Self.decoded(bytes)))
    }

    static let leftToTheDecoder = [
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","metadata":{"a":1}}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","sentById":7}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x"},"extra":1}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":1.0}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":1e2}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":01}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":9223372036854775808}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","fileId":"7"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":5}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"\ud800"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"\udc00x"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"\x"}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","mentions":[1,null]}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x","mentions":[1,]}}"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x"}} x"#,
        #"{"type":"new-message-notification","data":{"uid":"u","content":"x"},}"#,
        #"{"type":"new-message-notification","data":null}"#,
        #"{"type":null,"data":{}}"#,
        #"{"data":{}}"#,
        #"{"type":"creating-message-info","data":{"creating":1}}"#,
        #"[{"type":"x","data":{}}]"#,
        #"{"type":"something-else","data":{"content":7}}"#,
        "{\"type\":\"new-message-notification\",\"data\":{\"uid\":\"u\",\"content\":\"tab\tinside\"}}",
    ]

    @Test(arguments: leftToTheDecoder)
    func whatTheReaderCannotAnswerAlikeIsLeftToTheDecoder(_ payload: String) {
        let bytes = Array(payload.utf8)
        #expect(PlainEnvelopeReader.read(bytes) == nil, "the reader leaves \(payload)")
        #expect(Self.summary(ClientEnvelope.decode(bytes)) == Self.summary(Self.decoded(bytes)))
    }

    @Test func textThatIsNotUTF8IsLeftToTheDecoder() {
        var bytes = Array(#"{"type":"new-message-notification","data":{"uid":"u","content":"ab"}}"#.utf8)
        bytes.insert(0xC3, at: bytes.count - 4)
        #expect(PlainEnvelopeReader.read(bytes) == nil)
        #expect(Self.summary(ClientEnvelope.decode(bytes)) == Self.summary(Self.decoded(bytes)))
    }

    /// Thousands of payloads a byte or two away from stock ones (seeded, so a failure repeats):
    /// wherever the reader answers, the decoder answers the same.
    @Test func payloadsNearStockOnesReadAsTheDecoderReadsThem() throws {
        var random = SeededGenerator(seed: 0x5eed)
        let alphabet = Array(#"{}[]:,"\ 0123456789-.eE+ntrufalsbu/x\é🐎"#.utf8)
        var answered = 0
        for round in 0..<6_000 {
            var bytes = Array(Self.answered[round % Self.answered.count].utf8)
            for _ in 0...Int.random(in: 0...1, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                default: bytes.remove(at: at)
                }
            }
            guard (try? StrictJSON.check(bytes)) != nil, let read = PlainEnvelopeReader.read(bytes) else { continue }
            answered += 1
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.summary(read) == Self.summary(Self.decoded(bytes)), "\(text)")
        }
        #expect(answered > 1_000)
    }
}
