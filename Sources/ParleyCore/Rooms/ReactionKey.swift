/// A reaction's key: one emoji (a single grapheme cluster) or a shortcode `:[a-z0-9_+-]{1,32}:`.
public enum ReactionKey {
    public static func validated(_ key: String) throws -> String {
        guard isShortcode(key) || isEmoji(key) else {
            throw ParleyError.invalidRequest(
                "key must be one emoji or a shortcode such as :thumbsup: (lower-case letters, digits, _ + -)",
                field: "key")
        }
        return key
    }

    static func isShortcode(_ key: String) -> Bool {
        let inner = key.utf8.dropFirst().dropLast()
        return key.utf8.count >= 3 && key.first == ":" && key.last == ":" && (1...32).contains(inner.count)
            && inner.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "_+-".utf8.contains(byte)
            }
    }

    /// One grapheme cluster that displays as an emoji: a scalar with emoji presentation, or an
    /// emoji scalar made one by a variation selector, a keycap, a modifier or a joiner. A bare
    /// digit or `#` is an emoji scalar too, but text by default.
    static func isEmoji(_ key: String) -> Bool {
        guard key.count == 1, key.unicodeScalars.count <= 16, let first = key.unicodeScalars.first else {
            return false
        }
        let scalars = key.unicodeScalars
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) { return true }
        return first.properties.isEmoji && scalars.count > 1
    }
}
