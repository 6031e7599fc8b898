import Crypto
import Foundation

/// A bearer secret (access or refresh token): 256 random bits shown to the client once and
/// stored only as its SHA-256.
public struct OpaqueToken: Sendable, Hashable {
    /// What the client holds.
    public let value: String

    public init(value: String) { self.value = value }

    /// A new random token.
    public static func generate() -> OpaqueToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return OpaqueToken(value: Base64URL.encode(bytes))
    }

    /// What the database keeps: a lookup key that does not reveal the token.
    public var hash: [UInt8] { Array(SHA256.hash(data: Array(value.utf8))) }
}
