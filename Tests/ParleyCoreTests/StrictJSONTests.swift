import Testing

@testable import ParleyCore

struct StrictJSONTests {
    private func refusal(_ json: String) -> ParleyError? {
        do {
            try StrictJSON.check(Array(json.utf8))
            return nil
        } catch {
            return error as? ParleyError
        }
    }

    @Test func aKeyTwiceInOneObjectIsRefusedWithItsPath() {
        #expect(refusal(#"{"role":"reader","role":"writer"}"#)?.field == "role")
        #expect(refusal(#"{"device":{"name":"a","name":"b"}}"#)?.field == "device.name")
        #expect(refusal(#"{"a":[{"x":1},{"x":1,"x":2}]}"#)?.field == "a.1.x")
        // The decoder sees one key in both spellings.
        #expect(refusal(#"{"role":"reader","\u0072ole":"writer"}"#)?.field == "role")
        #expect(refusal(#"{"😀":1,"\ud83d\ude00":2}"#) != nil)
    }

    @Test func theSameKeyInDifferentObjectsIsFine() {
        #expect(refusal(#"{"a":{"x":1},"b":{"x":1},"x":[{"x":1},{"x":2}]}"#) == nil)
        #expect(refusal(#" { "content" : "say \"hi\"\n", "uid" : "u-1", "n": -1.5e3, "ok": true, "z": null } "#) == nil)
    }

    @Test func aNULInAnyStringIsRefused() {
        #expect(refusal(#"{"device":{"name":"a\u0000"}}"#)?.field == "device.name")
        #expect(refusal(#"{"tags":["ok","\u0000"]}"#)?.field == "tags.1")
        #expect(refusal(#"{"a\u0000":1}"#) != nil)
        // An escaped backslash before u0000 is the text \u0000, not a NUL.
        #expect(refusal(#"{"content":"\\u0000"}"#) == nil)
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(refusal(deep)?.code == .invalidRequest)
        let fine =
            String(repeating: "[", count: StrictJSON.maximumDepth)
            + String(repeating: "]", count: StrictJSON.maximumDepth)
        #expect(refusal(fine) == nil)
    }

    /// Syntax errors are the decoder's to report: the check neither refuses nor crashes on them.
    @Test func malformedJSONIsLeftToTheDecoder() {
        for text in [#"{"a":"#, #"{"a" 1}"#, "\"\\u12", "not json", "", "{", #"{"a":1,}"#, "\u{FF}\u{FE}"] {
            #expect(refusal(text) == nil, "\(text)")
        }
    }
}
