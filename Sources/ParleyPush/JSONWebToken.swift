import Crypto
import Foundation
import ParleyCore
import _CryptoExtras

/// Compact JSON Web Tokens (RFC 7519) as the push providers want them: ES256 for APNs
/// provider tokens, RS256 for Google's service-account assertions.
enum JSONWebToken {
    struct Header: Encodable {
        let alg: String
        let kid: String?
        let typ: String?
    }

    static func es256<Claims: Encodable>(_ claims: Claims, keyID: String, key: P256.Signing.PrivateKey) throws
        -> String
    {
        let input = try signingInput(Header(alg: "ES256", kid: keyID, typ: nil), claims)
        let signature = try key.signature(for: Data(input.utf8))
        // JWS wants the raw r || s form, not DER.
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    static func rs256<Claims: Encodable>(_ claims: Claims, keyID: String?, key: _RSA.Signing.PrivateKey) throws
        -> String
    {
        let input = try signingInput(Header(alg: "RS256", kid: keyID, typ: "JWT"), claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    private static func signingInput<Claims: Encodable>(_ header: Header, _ claims: Claims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Base64URL.encode(Array(try encoder.encode(header))) + "."
            + Base64URL.encode(Array(try encoder.encode(claims)))
    }
}
