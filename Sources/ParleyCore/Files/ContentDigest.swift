import Crypto

/// SHA-256 of content that arrives in pieces: a stored file's `checksum`.
public struct ContentDigest: Sendable {
    private var hasher = SHA256()

    public init() {}

    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        hasher.update(data: bytes)
    }

    public func finalize() -> [UInt8] {
        Array(hasher.finalize())
    }
}
