import Foundation
import ParleyCore
import Testing

/// The query's rules and the highlight, without a database.
struct SearchQueryTests {
    @Test func wordsAndQuotedPhrasesAreTerms() throws {
        #expect(try SearchQuery("quick  brown\tfox").terms == ["quick", "brown", "fox"])
        #expect(try SearchQuery(#"say "good morning" now"#).terms == ["say", "good morning", "now"])
        // An unclosed quote's phrase runs to the end; empty quotes are nothing.
        #expect(try SearchQuery(#"a "b c"#).terms == ["a", "b c"])
        #expect(try SearchQuery(#"x """#).terms == ["x"])
    }

    @Test func queriesOutsideTheBoundsOrWithNULAreRefused() {
        for q in [nil, "", "a", String(repeating: "é", count: 201), "ab\u{0}cd"] {
            #expect(throws: ParleyError.self) { try SearchQuery(q) }
        }
        #expect((try? SearchQuery(String(repeating: "é", count: 200))) != nil)
    }

    @Test func wordsAreLetterAndDigitRunsAndEachCJKCharacter() {
        #expect(SearchText.words(in: "Ahoj, světe! 42x").map(String.init) == ["Ahoj", "světe", "42x"])
        #expect(SearchText.words(in: "今日は good").map(String.init) == ["今", "日", "は", "good"])
        #expect(SearchText.fold("ZPRÁVA") == "zprava")
    }

    @Test func highlightsMarkWordsAQueryWordStartsAndEscapeTheRest() throws {
        let words = try SearchQuery("zprav <x>").foldedWords
        #expect(words == ["zprav", "x"])
        #expect(
            SearchText.highlight(#"<i>Zpráva</i> & x's "xy""#, words: words)
                == #"&lt;i&gt;<mark>Zpráva</mark>&lt;/i&gt; &amp; <mark>x</mark>&#39;s &quot;<mark>xy</mark>&quot;"#)
    }
}
