import ParleyCore
import Testing

/// What a refused `chat-in` payload still tells its `message-rejected`.
@Suite struct EnvelopeSalvageTests {
    private func salvage(_ text: String, limit: Int = 1 << 20) -> ClientEnvelope.Salvage {
        ClientEnvelope.salvage(Array(text.utf8), limit: limit)
    }

    @Test func aDuplicateKeyElsewhereStillNamesTheMessage() {
        let found = salvage(#"{"type":"x","data":{"content":"a","content":"b","uid":"u-1"},"hash":"h"}"#)
        #expect(found == .init(uid: "u-1", hash: "h"))
    }

    @Test func aDuplicatedUidOrHashIsNotGuessed() {
        #expect(salvage(#"{"data":{"uid":"a","uid":"b"},"hash":"h"}"#) == .init(uid: nil, hash: "h"))
        #expect(salvage(#"{"data":{"uid":"a"},"hash":"h","hash":"i"}"#) == .init(uid: "a", hash: nil))
        #expect(salvage(#"{"data":{"uid":"a"},"data":{"uid":"b"}}"#) == .init(uid: nil, hash: nil))
    }

    @Test func aLongContentIsRead() {
        let content = String(repeating: "z", count: 70_000)
        #expect(salvage(#"{"data":{"content":"\#(content)","uid":"long"}}"#).uid == "long")
    }

    @Test func whatIsNotAStringOrNotJSONGivesNothing() {
        #expect(salvage(#"{"data":{"uid":5},"hash":["h"]}"#) == .init())
        #expect(salvage(#"{"data":"text"}"#) == .init())
        #expect(salvage("not json") == .init())
        #expect(salvage(#"{"data":{"uid":"a"}}"#, limit: 4) == .init())
    }
}
