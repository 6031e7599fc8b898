import Crypto

/// The sender Parley's mosquitto plugin stamps on a `chat-in` message, with its signature.
///
/// The plugin adds the MQTT 5 user properties `parley-user` (the publisher's user id) and
/// `parley-user-signature`: lower-case hex of HMAC-SHA256(key, `v1` NUL user NUL topic NUL
/// SHA-256(payload)), with the key the plugin shares with the ingest (`plugin_opt_stamp_key`,
/// `PARLEY_MQTT_STAMP_KEY`). A broker without the plugin passes whatever a client wrote; only
/// the key's holder can sign, so the ingest believes a stamp only when it verifies
/// (`SenderStampBrokerTests` checks the plugin's C against this through a real broker).
public enum SenderStamp {
    public static let userProperty = "parley-user"
    public static let signatureProperty = "parley-user-signature"

    /// The signature the plugin stamps for `user` publishing `payload` on `topic`.
    public static func signature(user: String, topic: String, payload: [UInt8], key: SenderStampKey) -> String {
        code(user: user, topic: topic, payload: payload, key: key).hexString
    }

    /// The stamped user when `signature` is the plugin's for this message; nil when either is
    /// missing or the signature does not verify (compared in constant time).
    public static func verifiedSender(
        user: String?, signature: String?, topic: String, payload: [UInt8], key: SenderStampKey
    ) -> String? {
        guard let user, let signature, let code = bytes(ofHex: signature), code.count == SHA256.byteCount else {
            return nil
        }
        return ConstantTime.equal(self.code(user: user, topic: topic, payload: payload, key: key), code) ? user : nil
    }

    /// The HMAC of what is signed: `v1` NUL user NUL topic NUL SHA-256(payload). NUL cannot
    /// occur in an MQTT topic or a user id, so the fields cannot run into each other; the
    /// payload goes in as its digest.
    static func code(user: String, topic: String, payload: [UInt8], key: SenderStampKey) -> [UInt8] {
        var inner = key.inner
        versionPrefix.withUnsafeBytes { inner.update(bufferPointer: $0) }
        add(user, to: &inner)
        add(topic, to: &inner)
        payload.withUnsafeBytes { bytes in
            var digest = SHA256()
            digest.update(bufferPointer: bytes)
            digest.finalize().withUnsafeBytes { inner.update(bufferPointer: $0) }
        }
        var outer = key.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return Array(outer.finalize())
    }

    private static let versionPrefix: [UInt8] = Array("v1".utf8) + [0]
    private static let separator: [UInt8] = [0]

    /// `text` and the NUL after it.
    private static func add(_ text: String, to digest: inout SHA256) {
        var text = text
        text.withUTF8 { digest.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        separator.withUnsafeBytes { digest.update(bufferPointer: $0) }
    }

    static func bytes(ofHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

/// The HMAC key the broker plugin signs its sender stamps with and the ingest verifies them
/// with. Secret.
///
/// HMAC-SHA256 (RFC 2104) is two SHA-256 passes, over the key's inner pad and the message, then
/// over its outer pad and the first digest. The key's pads are hashed here, once; each stamp
/// continues copies of the two states (swift-crypto's digests copy on write) through SHA-256's
/// non-generic `update(bufferPointer:)`. Its generic HMAC made every field a trip through
/// `DataProtocol`'s regions and hashed the pads again: 4 % of the worker's CPU at 1,000
/// messages/s. `SenderStampTests` checks this against swift-crypto's `HMAC` and Python's `hmac`.
public struct SenderStampKey: Sendable {
    let inner: SHA256
    let outer: SHA256

    /// - Throws: when shorter than 32 bytes.
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 32 else {
            throw ParleyError(.internalError, "The sender stamp key must be at least 32 bytes.")
        }
        // A key longer than SHA-256's block is hashed first; a shorter one is padded with zeros.
        var block = bytes.count > 64 ? Array(SHA256.hash(data: bytes)) : bytes
        block += Array(repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        block.map { $0 ^ 0x36 }.withUnsafeBytes { inner.update(bufferPointer: $0) }
        var outer = SHA256()
        block.map { $0 ^ 0x5c }.withUnsafeBytes { outer.update(bufferPointer: $0) }
        self.inner = inner
        self.outer = outer
    }
}
