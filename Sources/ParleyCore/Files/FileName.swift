import Foundation

/// Turns a client's file name into a safe display name and extension.
///
/// Only the last path component survives (a name is never a path); control and format
/// characters go, whitespace is collapsed, and the result is at most 255 bytes. The name is
/// only ever shown and sent back: storage uses server-made keys.
public enum FileName {
    public static func sanitize(_ raw: String?) -> (name: String, fileExtension: String) {
        let last = (raw ?? "").split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let visible = last.unicodeScalars.filter { scalar in
            !CharacterSet.controlCharacters.contains(scalar) && !CharacterSet.illegalCharacters.contains(scalar)
                && scalar.properties.generalCategory != .format
        }
        var name = String(String.UnicodeScalarView(visible))
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        while name.hasPrefix(".") { name.removeFirst() }
        if name.isEmpty { name = "file" }
        while name.utf8.count > 255 { name.removeLast() }
        return (name, fileExtension(of: name))
    }

    /// Lower-case letters and digits after the last dot, up to 16; empty when there is none.
    static func fileExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        let candidate = name[name.index(after: dot)...].lowercased()
        guard (1...16).contains(candidate.count), candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return "" }
        return candidate
    }
}
