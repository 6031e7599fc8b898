import Crypto
import Foundation

/// Webhook signing as the Standard Webhooks specification says: the secret is `whsec_` and the
/// base64 of 32 random bytes, which are the HMAC key; a body is signed as
/// `v1,<base64 of HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.
public struct WebhookSignature: Sendable {
    public static let prefix = "whsec_"
    let key: SymmetricKey

    public init(key: [UInt8]) { self.key = SymmetricKey(data: key) }

    /// The key of a `whsec_…` secret; nil for anything else.
    public init?(secret: String) {
        guard secret.hasPrefix(Self.prefix),
            let bytes = Data(base64Encoded: String(secret.dropFirst(Self.prefix.count)))
        else { return nil }
        self.init(key: Array(bytes))
    }

    /// A new random key and its secret as the endpoint's owner is told it.
    public static func generate() -> (key: [UInt8], secret: String) {
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return (key, prefix + Data(key).base64EncodedString())
    }

    /// The `webhook-signature` header's value.
    public func signature(id: String, timestamp: Int, body: Data) -> String {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The three headers of a signed request.
    public func headers(id: String, timestamp: Int, body: Data) -> [(String, String)] {
        [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", signature(id: id, timestamp: timestamp, body: body)),
        ]
    }
}
