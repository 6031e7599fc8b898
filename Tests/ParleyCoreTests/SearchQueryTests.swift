import Foundation
import ParleyCore
import Testing

/// The query's rules and the highlight, without a database.
struct SearchQueryTests {
    @Test func wordsAndQuotedPhrasesAreTerms() throws {
        #expect(try SearchQuery("quick  brown\tfox").terms == ["quick", "brown", "fox"])
        #expect(try SearchQuery(#"say "good morning" now"#).terms == ["say", "good morning", "now"])
        // An unclosed quote's phrase runs to the end; empty quotes are nothing.
        #expect(try SearchQuery(#"ab "b c"#).terms == ["ab", "b c"])
        #expect(try SearchQuery(#"xy """#).terms == ["xy"])
    }

    @Test func queriesOutsideTheBoundsOrWithNULAreRefused() {
        for q in [nil, "", "a", String(repeating: "é", count: 201), "ab\u{0}cd"] {
            #expect(throws: ParleyError.self) { try SearchQuery(q) }
        }
        #expect((try? SearchQuery(String(repeating: "é", count: 200))) != nil)
        // Code points count: one grapheme of 10,000 combining marks is too long.
        #expect(throws: ParleyError.self) { try SearchQuery("a" + String(repeating: "\u{301}", count: 10_000) + "b") }
    }

    @Test func oneLetterWordsAreLeftOutOrRefusedAlone() throws {
        #expect(try SearchQuery("a faktura b").terms == ["faktura"])
        #expect(try SearchQuery("雨 x").terms == ["雨"])
        #expect(throws: ParleyError.self) { try SearchQuery("a b") }
    }

    @Test func wordsAreLetterAndDigitRunsAndEachCJKCharacter() {
        #expect(SearchText.words(in: "Ahoj, světe! 42x").map(String.init) == ["Ahoj", "světe", "42x"])
        #expect(SearchText.words(in: "今日は good").map(String.init) == ["今", "日", "は", "good"])
        #expect(SearchText.fold("ZPRÁVA") == "zprava")
    }

    @Test func aMarkThatJoinsAnAngleBracketIntoOneCharacterCannotHideIt() {
        let content = "\u{0600}<img src=x onerror=alert(1)//\u{0600}>"
        let highlighted = SearchText.highlight(content, words: ["img"])
        let unmarked = highlighted.replacingOccurrences(of: "<mark>", with: "")
            .replacingOccurrences(of: "</mark>", with: "")
        #expect(!unmarked.unicodeScalars.contains("<") && !unmarked.unicodeScalars.contains(">"))
    }

    @Test func highlightsMarkWordsAQueryWordStartsAndEscapeTheRest() throws {
        let words = try SearchQuery("zprav <x>").foldedWords
        #expect(words == ["zprav", "x"])
        #expect(
            SearchText.highlight(#"<i>Zpráva</i> & x's "xy""#, words: words)
                == #"&lt;i&gt;<mark>Zpráva</mark>&lt;/i&gt; &amp; <mark>x</mark>&#39;s &quot;<mark>xy</mark>&quot;"#)
    }
}
