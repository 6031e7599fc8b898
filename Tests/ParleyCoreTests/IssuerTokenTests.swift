import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import ParleyCore

/// An issuer's token is trusted only when every check holds; each refusal names its reason.
struct IssuerTokenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let p256 = P256.Signing.PrivateKey()
    static let ed25519 = Curve25519.Signing.PrivateKey()

    static let issuer = TrustedIssuer(
        issuer: "https://id.example.com", audience: "parley-app", keys: .file("/unused"),
        algorithms: [.rs256, .es256, .edDSA])

    /// The issuer's JWKS: one key of each kind, plus keys the set must leave out.
    static var keys: JSONWebKeySet {
        let rsaKey = rsa.publicKey.jwkComponents
        let document = """
            {"keys": [
              {"kty": "RSA", "kid": "r1", "use": "sig", "n": "\(rsaKey.n)", "e": "\(rsaKey.e)"},
              {"kty": "EC", "crv": "P-256", "kid": "e1", "x": "\(coordinate(0))", "y": "\(coordinate(1))"},
              {"kty": "OKP", "crv": "Ed25519", "kid": "d1",
               "x": "\(Base64URL.encode(Array(ed25519.publicKey.rawRepresentation)))"},
              {"kty": "oct", "kid": "h1", "k": "c2VjcmV0"},
              {"kty": "EC", "crv": "P-384", "kid": "e384", "x": "AA", "y": "AA"},
              {"kty": "RSA", "kid": "enc", "use": "enc", "n": "\(rsaKey.n)", "e": "\(rsaKey.e)"}
            ]}
            """
        return try! JSONWebKeySet(json: Array(document.utf8))
    }

    static func coordinate(_ index: Int) -> String {
        let raw = Array(p256.publicKey.rawRepresentation)
        return Base64URL.encode(Array(raw[(index * 32)..<(index * 32 + 32)]))
    }

    static func claims(_ changes: [String: String] = [:]) -> [String: String] {
        var claims = [
            "iss": #""https://id.example.com""#, "aud": #""parley-app""#, "sub": #""user-42""#,
            "exp": "\(Int(now.timeIntervalSince1970) + 300)", "email": #""ada@example.com""#,
            "email_verified": "true", "given_name": #""Ada""#, "family_name": #""Lovelace""#,
        ]
        for (name, value) in changes { claims[name] = value == "-" ? nil : value }
        return claims
    }

    /// A token signed by `algorithm`'s key, its header and claims as raw JSON values.
    static func token(
        _ algorithm: String = "ES256", kid: String? = "e1", claims: [String: String] = claims(),
        header extra: String = ""
    ) throws -> String {
        let header = "{\"alg\":\"\(algorithm)\"\(kid.map { ",\"kid\":\"\($0)\"" } ?? "")\(extra)}"
        let payload =
            "{" + claims.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
            + "}"
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let data = Data(input.utf8)
        let signature: [UInt8] =
            switch algorithm {
            case "RS256": Array(try rsa.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
            case "EdDSA": Array(try ed25519.signature(for: data))
            case "HS256":
                Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: Array("secret".utf8))))
            case "none": []
            default: Array(try p256.signature(for: data).rawRepresentation)
            }
        return input + "." + Base64URL.encode(signature)
    }

    func verify(_ token: String, issuer: TrustedIssuer = issuer) throws(IssuerTokenRefusal) -> IssuedIdentity {
        try IssuerToken.verify(token, from: issuer, keys: Self.keys, now: Self.now)
    }

    @Test(arguments: [("RS256", "r1"), ("ES256", "e1"), ("EdDSA", "d1")])
    func aTokenSignedByEachAlgorithmIsTrusted(algorithm: String, kid: String) throws {
        let identity = try verify(try Self.token(algorithm, kid: kid))
        #expect(
            identity
                == IssuedIdentity(
                    issuer: "https://id.example.com", subject: "user-42", email: "ada@example.com",
                    emailVerified: true, firstName: "Ada", lastName: "Lovelace"))
    }

    @Test func theKeySetLeavesOutKeysItCannotVerifyWith() {
        #expect(Self.keys.keyIDs == ["r1", "e1", "d1"])
    }

    @Test func aTokenWithoutKeyIDUsesTheOnlyKeyOfItsType() throws {
        #expect(try verify(try Self.token("EdDSA", kid: nil)).subject == "user-42")
    }

    @Test func claimNamesComeFromTheIssuersSettingsAndAbsentOnesAreNil() throws {
        var named = Self.issuer
        named = TrustedIssuer(
            issuer: named.issuer, audience: named.audience, keys: named.keys, algorithms: named.algorithms,
            claims: TrustedIssuer.ClaimNames(email: "mail", firstName: "first", lastName: "last"))
        let identity = try verify(
            try Self.token(claims: Self.claims(["mail": #""a@b.c""#, "first": #""A""#, "email_verified": "-"])),
            issuer: named)
        #expect(identity.email == "a@b.c" && identity.firstName == "A" && identity.lastName == nil)
        #expect(!identity.emailVerified)
    }

    @Test func anAudienceListNamingThisDeploymentIsTrusted() throws {
        let token = try Self.token(claims: Self.claims(["aud": #"["other", "parley-app"]"#]))
        #expect(try verify(token).subject == "user-42")
    }

    @Test func theClocksLeewayHoldsForExpiryAndNotBefore() throws {
        let now = Int(Self.now.timeIntervalSince1970)
        #expect(try verify(try Self.token(claims: Self.claims(["exp": "\(now - 59)"]))).subject == "user-42")
        #expect(try verify(try Self.token(claims: Self.claims(["nbf": "\(now + 59)"]))).subject == "user-42")
    }

    static let refused: [(String, IssuerTokenRefusal, @Sendable () throws -> String)] = [
        ("a bad signature", .badSignature, { tampered(try token()) }),
        ("expired", .expired, { try token(claims: claims(["exp": "\(Int(now.timeIntervalSince1970) - 61)"])) }),
        (
            "not yet valid", .notYetValid,
            { try token(claims: claims(["nbf": "\(Int(now.timeIntervalSince1970) + 61)"])) }
        ),
        ("without expiry", .malformed, { try token(claims: claims(["exp": "-"])) }),
        ("of another issuer", .wrongIssuer, { try token(claims: claims(["iss": #""https://evil.example""#])) }),
        ("for another audience", .wrongAudience, { try token(claims: claims(["aud": #""other""#])) }),
        ("alg none", .algorithmNotAllowed("none"), { try token("none", kid: nil) }),
        ("an HMAC algorithm", .algorithmNotAllowed("HS256"), { try token("HS256", kid: "h1") }),
        ("an unknown kid", .unknownKey("nobody"), { try token(kid: "nobody") }),
        ("a kid of another key type", .unknownKey("r1"), { try token("ES256", kid: "r1") }),
        ("without subject", .noSubject, { try token(claims: claims(["sub": "-"])) }),
        ("a claim given twice", .malformed, { try token(claims: claims(["sub": #""a", "sub": "b""#])) }),
        ("a critical header", .malformed, { try token(header: #","crit":["exp"]"#) }),
        (
            "over 16 KiB", .tooLarge,
            { try token(claims: claims(["pad": "\"" + String(repeating: "x", count: 16_384) + "\""])) }
        ),
        ("not a JWS", .malformed, { "a.b" }),
    ]

    static func tampered(_ token: String) -> String {
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(
            Array(#"{"iss":"https://id.example.com","aud":"parley-app","sub":"admin","exp":9999999999}"#.utf8))
        return parts.joined(separator: ".")
    }

    @Test(arguments: refused.indices)
    func aTokenIsRefusedWithItsReason(index: Int) throws {
        let (name, reason, make) = Self.refused[index]
        let token = try make()
        #expect(throws: reason, "\(name)") { try verify(token) }
    }

    @Test func anAlgorithmTheIssuerDoesNotAllowIsRefused() throws {
        let onlyRSA = TrustedIssuer(
            issuer: Self.issuer.issuer, audience: Self.issuer.audience, keys: Self.issuer.keys, algorithms: [.rs256])
        #expect(throws: IssuerTokenRefusal.algorithmNotAllowed("ES256")) {
            try verify(try Self.token(), issuer: onlyRSA)
        }
    }

    @Test func anIssuersEntryNeedsOneKeySourceAnHTTPSURLAndAnAlgorithm() throws {
        func decode(_ json: String) throws -> TrustedIssuer {
            try JSONDecoder().decode(TrustedIssuer.self, from: Data(json.utf8))
        }
        let entry = try decode(
            #"{"issuer": "i", "audience": "a", "jwksUrl": "https://id.example.com/jwks", "algorithms": ["ES256"]}"#)
        #expect(entry.keys == .url(URL(string: "https://id.example.com/jwks")!) && entry.claims == .init())
        #expect(throws: DecodingError.self) {
            try decode(
                #"{"issuer": "i", "audience": "a", "jwksUrl": "http://id.example.com", "algorithms": ["ES256"]}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(
                #"{"issuer": "i", "audience": "a", "jwksUrl": "https://x", "jwksFile": "/k", "algorithms": ["ES256"]}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(#"{"issuer": "i", "audience": "a", "jwksFile": "/k", "algorithms": []}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(#"{"issuer": "i", "audience": "a", "jwksFile": "/k", "algorithms": ["HS256"]}"#)
        }
    }
}

extension _RSA.Signing.PublicKey {
    /// The modulus and exponent as a JWK writes them (base64url, big-endian).
    var jwkComponents: (n: String, e: String) {
        let components = try! getKeyPrimitives()
        return (Base64URL.encode(Array(components.modulus)), Base64URL.encode(Array(components.publicExponent)))
    }
}
