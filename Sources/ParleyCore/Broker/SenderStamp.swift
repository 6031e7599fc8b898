import Crypto
import Foundation

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
        Array(code(user: user, topic: topic, payload: payload, key: key)).hexString
    }

    /// The stamped user when `signature` is the plugin's for this message; nil when either is
    /// missing or the signature does not verify (compared in constant time).
    public static func verifiedSender(
        user: String?, signature: String?, topic: String, payload: [UInt8], key: SenderStampKey
    ) -> String? {
        guard let user, let signature, let code = bytes(ofHex: signature), code.count == SHA256.byteCount else {
            return nil
        }
        return self.code(user: user, topic: topic, payload: payload, key: key) == code ? user : nil
    }

    /// The HMAC of what is signed: `v1` NUL user NUL topic NUL SHA-256(payload). NUL cannot
    /// occur in an MQTT topic or a user id, so the fields cannot run into each other; the
    /// payload goes in as its digest. Fed field by field into a copy of the keyed HMAC, so a
    /// message neither hashes the key again nor joins the fields into a new array.
    static func code(user: String, topic: String, payload: [UInt8], key: SenderStampKey) -> HMAC<SHA256>.MAC {
        var hmac = key.keyed
        hmac.update(data: versionPrefix)
        add(user, to: &hmac)
        add(topic, to: &hmac)
        SHA256.hash(data: payload).withUnsafeBytes { hmac.update(data: $0) }
        return hmac.finalize()
    }

    private static let versionPrefix: [UInt8] = Array("v1".utf8) + [0]
    private static let separator: [UInt8] = [0]

    /// `text` and the NUL after it.
    private static func add(_ text: String, to hmac: inout HMAC<SHA256>) {
        var text = text
        text.withUTF8 { hmac.update(data: UnsafeRawBufferPointer($0)) }
        hmac.update(data: separator)
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
public struct SenderStampKey: Sendable {
    /// The HMAC with the key already hashed in; every stamp continues a copy of it
    /// (swift-crypto's digests copy on write).
    let keyed: HMAC<SHA256>

    /// - Throws: when shorter than 32 bytes.
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 32 else {
            throw ParleyError(.internalError, "The sender stamp key must be at least 32 bytes.")
        }
        keyed = HMAC(key: SymmetricKey(data: bytes))
    }
}
