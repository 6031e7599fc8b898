import Foundation

/// Blob keys: made by the server from random bytes, never from user input.
public enum BlobKey {
    public static func generate() -> String {
        (0..<16).map { _ in UInt8.random(in: 0...255) }.hexString
    }

    /// Lower-case hex and dashes only (a thumbnail key is `<key>-small`), 16 to 80 characters.
    public static func isValid(_ key: String) -> Bool {
        (16...80).contains(key.count)
            && key.allSatisfy { ("0"..."9").contains($0) || ("a"..."z").contains($0) || $0 == "-" }
    }

    public static func thumbnail(of key: String, _ size: ThumbnailSize) -> String { "\(key)-\(size.rawValue)" }
}
