import Crypto
import Foundation

/// The MQTT password a client presents to the broker: a signed, expiring statement of who
/// it is, which the broker plugin verifies locally, without a network call.
///
/// Format (ASCII): `v1.<payload>.<signature>` where `payload` is the base64url (no padding)
/// of `<userId>:<clientId>:<sessionId>:<expiresAt unix seconds>` and `signature` the base64url
/// of HMAC-SHA256(key, `v1.<payload>`). The vectors in `Tests/Vectors/mqtt-token.json` pin it
/// for the C plugin.
public struct MQTTToken: Sendable, Equatable {
    public let userID: Int64
    public let clientID: String
    public let sessionID: Int64
    /// Seconds since 1970; the token is refused from this instant on.
    public let expiresAt: Int64

    public init(userID: Int64, clientID: String, sessionID: Int64, expiresAt: Int64) {
        self.userID = userID
        self.clientID = clientID
        self.sessionID = sessionID
        self.expiresAt = expiresAt
    }

    /// Why a presented token is refused.
    public enum Failure: Error, Equatable {
        case malformed
        case badSignature
        case expired
    }

    public func signed(with key: MQTTTokenKey) -> String {
        let payload = Base64URL.encode(Array("\(userID):\(clientID):\(sessionID):\(expiresAt)".utf8))
        let signingInput = "v1.\(payload)"
        return "\(signingInput).\(Base64URL.encode(key.signature(of: signingInput)))"
    }

    /// Checks the signature first (constant time), then the claims and the expiry.
    public static func verify(_ token: String, key: MQTTTokenKey, now: Date = Date()) throws(Failure) -> MQTTToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 512, parts.count == 3, parts[0] == "v1",
            let signature = Base64URL.decode(String(parts[2]))
        else { throw .malformed }
        guard key.isValidSignature(signature, of: "v1.\(parts[1])") else { throw .badSignature }
        guard let payload = Base64URL.decode(String(parts[1])),
            let text = String(bytes: payload, encoding: .utf8)
        else { throw .malformed }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 4, let userID = Int64(fields[0]), !fields[1].isEmpty,
            let sessionID = Int64(fields[2]), let expiresAt = Int64(fields[3])
        else { throw .malformed }
        guard Int64(now.timeIntervalSince1970) < expiresAt else { throw .expired }
        return MQTTToken(userID: userID, clientID: String(fields[1]), sessionID: sessionID, expiresAt: expiresAt)
    }
}

/// The HMAC key shared by the API (which signs) and the broker plugin (which verifies).
public struct MQTTTokenKey: Sendable {
    private let key: SymmetricKey

    /// - Throws: when shorter than 32 bytes.
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 32 else {
            throw ParleyError(.internalError, "The MQTT token key must be at least 32 bytes.")
        }
        key = SymmetricKey(data: bytes)
    }

    func signature(of input: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key))
    }

    func isValidSignature(_ signature: [UInt8], of input: String) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Array(input.utf8), using: key)
    }
}
