import Foundation

/// A search as a user types it: words, each matching a word of the text as a prefix, and
/// quoted phrases, whose words match in order. Case and accents are ignored in any language.
public struct SearchQuery: Sendable, Equatable {
    /// Each term is a word or a phrase; all must match.
    public let terms: [String]

    public static let length = 2...200

    /// Parses `q`, refusing what cannot be a search (too short, too long, NUL). Lengths count
    /// code points, as JSON Schema does (a grapheme may hold thousands). A word of one letter
    /// would match a large part of every room as a prefix: it is left out when the query has a
    /// longer term, and refused alone.
    public init(_ q: String?) throws {
        guard let q, Self.length.contains(q.unicodeScalars.count), !q.unicodeScalars.contains("\u{0}") else {
            throw ParleyError.invalidRequest("q must be 2 to 200 characters.", field: "q")
        }
        var terms: [String] = []
        // Quotes alternate between phrases and words; an unclosed quote's phrase runs to the end.
        for (index, part) in q.split(separator: "\"", omittingEmptySubsequences: false).enumerated() {
            if index % 2 == 1 {
                let phrase = part.trimmingCharacters(in: .whitespacesAndNewlines)
                if !phrase.isEmpty { terms.append(phrase) }
            } else {
                terms += part.split(whereSeparator: { $0.isWhitespace }).map(String.init)
            }
        }
        let meaningful = terms.filter { term in
            term.unicodeScalars.count > 1 || term.contains(where: SearchText.isIdeographic)
        }
        guard !meaningful.isEmpty || terms.isEmpty else {
            throw ParleyError.invalidRequest("q needs a word of at least 2 letters.", field: "q")
        }
        self.terms = meaningful
    }

    /// The words of the query as ``SearchText`` folds them, for highlighting.
    public var foldedWords: [String] {
        terms.flatMap { SearchText.words(in: $0).map { SearchText.fold(String($0)) } }
    }
}

/// How text is cut into words and folded for matching, on the Swift side: what highlights
/// marks. (PostgreSQL's side, which finds the messages, is `messenger.search_text` with the
/// `simple` parser: the same idea, case-folded and unaccented, each CJK character a word.)
public enum SearchText {
    /// Lower-case, without diacritics.
    public static func fold(_ word: String) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Ranges of the words of `text`: runs of letters and digits, each CJK character alone.
    public static func words(in text: String) -> [Substring] {
        var words: [Substring] = []
        var start: String.Index?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if isIdeographic(character) {
                if let begun = start { words.append(text[begun..<index]) }
                start = nil
                words.append(text[index..<next])
            } else if character.isLetter || character.isNumber {
                if start == nil { start = index }
            } else if let begun = start {
                words.append(text[begun..<index])
                start = nil
            }
            index = next
        }
        if let begun = start { words.append(text[begun..<text.endIndex]) }
        return words
    }

    /// Hiragana, katakana, CJK ideographs and Hangul: scripts written without spaces.
    static func isIdeographic(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value else { return false }
        return (0x3040...0x30FF).contains(scalar) || (0x3400...0x4DBF).contains(scalar)
            || (0x4E00...0x9FFF).contains(scalar) || (0xF900...0xFAFF).contains(scalar)
            || (0xAC00...0xD7AF).contains(scalar)
    }

    /// `content` HTML-escaped, with every word that a word of the query starts wrapped in
    /// `<mark>`…`</mark>`.
    public static func highlight(_ content: String, words query: [String]) -> String {
        var result = ""
        var last = content.startIndex
        for word in words(in: content) {
            result += escaped(content[last..<word.startIndex])
            let folded = fold(String(word))
            if query.contains(where: { !$0.isEmpty && folded.hasPrefix($0) }) {
                result += "<mark>" + escaped(word) + "</mark>"
            } else {
                result += escaped(word)
            }
            last = word.endIndex
        }
        return result + escaped(content[last...])
    }

    /// Escapes code point by code point: a character (a grapheme) may begin with a mark that
    /// hides a `<` behind it (U+0600 followed by `<` is one character).
    static func escaped(_ text: Substring) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
