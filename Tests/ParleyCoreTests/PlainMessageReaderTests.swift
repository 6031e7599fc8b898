import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyCore

/// What the reader answers, of a `chat-in` payload or a REST body, is what `JSONDecoder`
/// answers, field for field and refusal for refusal; whatever it cannot answer alike is left
/// to the decoder.
struct PlainMessageReaderTests {
    /// An envelope as text: every field, and the message or its refusal.
    static func summary(_ envelope: ClientEnvelope?) -> String {
        guard let envelope else { return "none" }
        let data = envelope.data
        let notice = [
            data.chatRoomId.map(String.init), data.uid, data.messageId.map(String.init), data.seq.map(String.init),
            data.creating.map(String.init), data.time,
        ].map { $0.map { "\"\($0)\"" } ?? "nil" }
        let message = envelope.message == nil ? "no message" : summary(envelope.message)
        return "\(envelope.type) \(notice) \(envelope.hash.map { "\"\($0)\"" } ?? "nil") \(message)"
    }

    static func summary(_ message: Result<NewMessage, any Error>?) -> String {
        switch message {
        case .success(let message)?: "\(message)"
        case .failure(let error as ParleyError)?: "refused \(error.code) \(error.field ?? "-") \(error.detail)"
        case .failure(let error)?: "failed \(error)"
        case nil: "none"
        }
    }

    static func decodedBody(_ body: [UInt8]) -> Result<NewMessage, any Error> {
        Result { try JSONCoding.decoder.decode(NewMessage.self, from: Data(body)) }
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
        let read = PlainMessageReader.envelope(bytes)
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
        #expect(PlainMessageReader.envelope(bytes) == nil, "the reader leaves \(payload)")
        #expect(Self.summary(ClientEnvelope.decode(bytes)) == Self.summary(Self.decoded(bytes)))
    }

    static let answeredBodies = [
        #"{"content":"Hello","uid":"u-1"}"#, #" { "uid" : "u" , "content" : "a\nb \uD83D\uDC0E" } "#,
        #"{"uid":"u","content":"","attachments":[3,4],"replyToId":9,"metadata":null}"#,
        #"{"uid":"u","content":"x","mentions":[1,2,1],"type":"x-poll"}"#, #"{"uid":"","content":"x"}"#,
        #"{"uid":"u","content":"x","type":"system"}"#, #"{"uid":"u","content":"x","fileId":1,"attachments":[2]}"#,
        #"{"uid":"u","content":"x","chatRoomId":5,"seq":3}"#, #"{}"#,
    ]

    @Test func whatTheReaderAnswersOfARESTBodyIsTheDecodersAnswer() throws {
        for body in Self.answeredBodies {
            let bytes = Array(body.utf8)
            try StrictJSON.check(bytes)
            let read = NewMessage.plain(bytes)
            #expect(read != nil, "the reader answers \(body)")
            #expect(Self.summary(read) == Self.summary(Self.decodedBody(bytes)), "\(body)")
        }
        for body in [
            #"{"uid":"u","content":"x","metadata":{"a":1}}"#, #"{"uid":"u","content":"x","sentById":7}"#,
            #"{"uid":"u","content":5}"#, #"{"uid":"u","content":"x","fileId":1.0}"#, #"{"uid":"u","content":"x"} x"#,
            #"{"uid":"u","content":"x","seq":"3"}"#, #"[]"#, #"null"#,
        ] {
            #expect(NewMessage.plain(Array(body.utf8)) == nil, "the reader leaves \(body)")
        }
    }

    @Test func textThatIsNotUTF8IsLeftToTheDecoder() {
        var bytes = Array(#"{"type":"new-message-notification","data":{"uid":"u","content":"ab"}}"#.utf8)
        bytes.insert(0xC3, at: bytes.count - 4)
        #expect(PlainMessageReader.envelope(bytes) == nil)
        #expect(Self.summary(ClientEnvelope.decode(bytes)) == Self.summary(Self.decoded(bytes)))
    }

    /// Thousands of payloads and bodies a byte or two away from stock ones (seeded, so a failure
    /// repeats): wherever the reader answers, the decoder answers the same.
    @Test func payloadsNearStockOnesReadAsTheDecoderReadsThem() throws {
        var random = SeededGenerator(seed: 0x5eed)
        let alphabet = Array(#"{}[]:,"\ 0123456789-.eE+ntrufalsbu/x\é🐎"#.utf8)
        var (answered, answeredBodies) = (0, 0)
        let stock = Self.answered + Self.answeredBodies
        for round in 0..<8_000 {
            var bytes = Array(stock[round % stock.count].utf8)
            for _ in 0...Int.random(in: 0...1, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                default: bytes.remove(at: at)
                }
            }
            guard (try? StrictJSON.check(bytes)) != nil else { continue }
            let text = String(decoding: bytes, as: UTF8.self)
            if let read = PlainMessageReader.envelope(bytes) {
                answered += 1
                #expect(Self.summary(read) == Self.summary(Self.decoded(bytes)), "\(text)")
            }
            if let read = NewMessage.plain(bytes) {
                answeredBodies += 1
                #expect(Self.summary(read) == Self.summary(Self.decodedBody(bytes)), "\(text)")
            }
        }
        #expect(answered > 1_000)
        #expect(answeredBodies > 150)
    }
}
