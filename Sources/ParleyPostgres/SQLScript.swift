import Foundation

/// Splits a SQL script into its statements.
///
/// PostgresNIO speaks only the extended query protocol, which takes one statement at a time,
/// so a migration file is cut at top-level semicolons — not inside quotes, identifiers,
/// comments or dollar-quoted bodies (functions, `DO` blocks).
enum SQLScript {
    static func statements(in script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0

        func flush() {
            let statement = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !statement.isEmpty && !isOnlyComments(statement) { statements.append(statement) }
            current = String.UnicodeScalarView()
        }

        func copy(until terminator: [Unicode.Scalar], from start: Int) -> Int {
            var position = start
            while position < characters.count {
                if characters[position...].starts(with: terminator) {
                    current.append(contentsOf: terminator)
                    return position + terminator.count
                }
                current.append(characters[position])
                position += 1
            }
            return position
        }

        /// `/* ... */`, which PostgreSQL lets nest.
        func copyBlockComment(from start: Int) -> Int {
            var depth = 0
            var position = start
            while position < characters.count {
                let pair = characters[position...].prefix(2)
                if pair.elementsEqual(["/", "*"]) {
                    depth += 1
                } else if pair.elementsEqual(["*", "/"]) {
                    depth -= 1
                }
                if pair.count == 2 && (pair.elementsEqual(["/", "*"]) || pair.elementsEqual(["*", "/"])) {
                    current.append(contentsOf: pair)
                    position += 2
                    if depth == 0 { return position }
                } else {
                    current.append(characters[position])
                    position += 1
                }
            }
            return position
        }

        /// `E'...'`, where a backslash escapes the next character (`\'` included).
        func isEscapeStringPrefix(at position: Int) -> Bool {
            guard position >= 1, characters[position - 1] == "E" || characters[position - 1] == "e" else {
                return false
            }
            guard position >= 2 else { return true }
            let before = characters[position - 2]
            return !(before.properties.isAlphabetic || ("0"..."9").contains(before) || before == "_")
        }

        func copyEscapeString(from start: Int) -> Int {
            current.append("'")
            var position = start + 1
            while position < characters.count {
                let character = characters[position]
                current.append(character)
                position += 1
                if character == "\\", position < characters.count {
                    current.append(characters[position])
                    position += 1
                } else if character == "'" {
                    return position
                }
            }
            return position
        }

        while index < characters.count {
            let character = characters[index]
            let next: Unicode.Scalar? = index + 1 < characters.count ? characters[index + 1] : nil
            switch character {
            case "-" where next == "-":
                index = copy(until: ["\n"], from: index)
            case "/" where next == "*":
                index = copyBlockComment(from: index)
            case "'" where isEscapeStringPrefix(at: index):
                index = copyEscapeString(from: index)
            case "'", "\"":
                current.append(character)
                // A doubled quote inside is an escaped quote: copying up to each quote
                // and continuing handles it as two adjacent quoted runs.
                index = copy(until: [character], from: index + 1)
            case "$":
                if let tag = dollarTag(characters, at: index) {
                    current.append(contentsOf: tag)
                    index = copy(until: tag, from: index + tag.count)
                } else {
                    current.append(character)
                    index += 1
                }
            case ";":
                flush()
                index += 1
            default:
                current.append(character)
                index += 1
            }
        }
        flush()
        return statements
    }

    /// `$$` or `$tag$` starting at `index`, if there is one.
    private static func dollarTag(_ characters: [Unicode.Scalar], at index: Int) -> [Unicode.Scalar]? {
        var end = index + 1
        while end < characters.count,
            characters[end] == "_" || characters[end].properties.isAlphabetic
                || (end > index + 1 && ("0"..."9").contains(characters[end]))
        {
            end += 1
        }
        guard end < characters.count, characters[end] == "$" else { return nil }
        return Array(characters[index...end])
    }

    private static func isOnlyComments(_ statement: String) -> Bool {
        statement.split(separator: "\n").allSatisfy {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix("--") || $0.trimmingCharacters(in: .whitespaces).isEmpty
        }
    }
}
