import Crypto
import Foundation
import _CryptoExtras

/// Who a trusted issuer's token says its bearer is.
public struct IssuedIdentity: Sendable, Equatable {
    public let issuer: String
    /// The user's id at the issuer (`sub`).
    public let subject: String
    public let email: String?
    /// `email_verified: true`: the issuer vouches for the address.
    public let emailVerified: Bool
    public let firstName: String?
    public let lastName: String?
}

/// Why an issuer's token is refused. The client hears only 401 `invalid-token`; the reason is
/// for the log, and ``unknownKey(_:)`` asks for the issuer's keys again.
public enum IssuerTokenRefusal: Error, Equatable, Sendable {
    case tooLarge
    /// Not three base64url parts of JSON objects, or a claim of the wrong type.
    case malformed
    /// `none`, an HMAC algorithm, or one the issuer is not trusted to use.
    case algorithmNotAllowed(String)
    /// No key of the issuer's set fits the token's `kid` and algorithm.
    case unknownKey(String?)
    case badSignature
    case wrongIssuer
    case wrongAudience
    case expired
    case notYetValid
    case noSubject
}

/// The checks of an issuer's token (a compact JWS, RFC 7515/7519), before anything is
/// provisioned: size, algorithm, key, signature, issuer, audience, times, subject.
public enum IssuerToken {
    /// Larger tokens are refused unread.
    public static let sizeLimit = 16 * 1024
    /// Clocks disagree: `exp` and `nbf` are honoured this much late or early.
    public static let leeway: TimeInterval = 60

    /// The token's header: its algorithm as named and its key id, read without trusting it
    /// (to pick the issuer and its keys).
    public struct Header: Sendable, Equatable {
        public let algorithm: String
        public let keyID: String?
    }

    public static func header(of token: String) throws(IssuerTokenRefusal) -> Header {
        try Parts(token).header
    }

    /// A token split and read once, not yet trusted: its unverified `iss` says which trusted
    /// issuer's keys to check it with, and `verify(_:from:keys:now:)` checks it.
    public struct Parsed: Sendable {
        fileprivate let parts: Parts
        fileprivate let claims: [String: Claim]
        /// The `iss` the token claims, unverified.
        public let claimedIssuer: String

        public init(_ token: String) throws(IssuerTokenRefusal) {
            parts = try Parts(token)
            claims = try parts.claims()
            guard case .string(let issuer) = claims["iss"] else { throw .wrongIssuer }
            claimedIssuer = issuer
        }

        public var header: Header { parts.header }
    }

    /// The unverified `iss` of a token: which trusted issuer's keys to check it with.
    public static func claimedIssuer(of token: String) throws(IssuerTokenRefusal) -> String {
        try Parsed(token).claimedIssuer
    }

    /// The identity `token` proves, checked against `issuer` and its `keys` at `now`.
    public static func verify(_ token: String, from issuer: TrustedIssuer, keys: JSONWebKeySet, now: Date)
        throws(IssuerTokenRefusal) -> IssuedIdentity
    {
        try verify(try Parsed(token), from: issuer, keys: keys, now: now)
    }

    /// The identity a token read once proves, checked against `issuer` and its `keys` at `now`.
    public static func verify(_ token: Parsed, from issuer: TrustedIssuer, keys: JSONWebKeySet, now: Date)
        throws(IssuerTokenRefusal) -> IssuedIdentity
    {
        let parts = token.parts
        guard let algorithm = TrustedIssuer.Algorithm(rawValue: parts.header.algorithm),
            issuer.algorithms.contains(algorithm)
        else { throw .algorithmNotAllowed(parts.header.algorithm) }
        guard let key = keys.key(id: parts.header.keyID, for: algorithm) else {
            throw .unknownKey(parts.header.keyID)
        }
        guard isValid(parts.signature, of: Data(parts.signingInput.utf8), by: key) else { throw .badSignature }

        let claims = token.claims
        guard case .string(issuer.issuer) = claims["iss"] else { throw .wrongIssuer }
        switch claims["aud"] {
        case .string(let audience) where audience == issuer.audience: break
        case .strings(let audiences) where audiences.contains(issuer.audience): break
        default: throw .wrongAudience
        }
        guard case .number(let expires) = claims["exp"] else { throw .malformed }
        guard now.timeIntervalSince1970 < expires + leeway else { throw .expired }
        switch claims["nbf"] {
        case nil: break
        case .number(let notBefore): guard now.timeIntervalSince1970 + leeway >= notBefore else { throw .notYetValid }
        default: throw .malformed
        }
        guard case .string(let subject) = claims["sub"], !subject.isEmpty, subject.utf8.count <= 255 else {
            throw .noSubject
        }
        func text(_ name: String) throws(IssuerTokenRefusal) -> String? {
            switch claims[name] {
            case nil, .null: return nil
            case .string(let value): return value
            default: throw .malformed
            }
        }
        return IssuedIdentity(
            issuer: issuer.issuer, subject: subject, email: try text(issuer.claims.email),
            emailVerified: claims["email_verified"] == .bool(true), firstName: try text(issuer.claims.firstName),
            lastName: try text(issuer.claims.lastName))
    }

    private static func isValid(_ signature: [UInt8], of input: Data, by key: JSONWebKeySet.Key) -> Bool {
        switch key {
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        case .p256(let key):
            // JWS carries r || s, not DER.
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: input)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: input)
        }
    }

    /// A compact JWS split and its header read.
    fileprivate struct Parts: Sendable {
        let header: Header
        let signingInput: Substring
        let payload: [UInt8]
        let signature: [UInt8]

        init(_ token: String) throws(IssuerTokenRefusal) {
            guard token.utf8.count <= IssuerToken.sizeLimit else { throw .tooLarge }
            let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
            guard pieces.count == 3, let headerBytes = Base64URL.decode(String(pieces[0])),
                let payload = Base64URL.decode(String(pieces[1])), let signature = Base64URL.decode(String(pieces[2]))
            else { throw .malformed }
            let fields = try Self.object(headerBytes)
            guard case .string(let algorithm) = fields["alg"] else { throw .malformed }
            let keyID: String?
            switch fields["kid"] {
            case nil: keyID = nil
            case .string(let id): keyID = id
            default: throw .malformed
            }
            // A header that asks for anything to be understood first is not a plain JWS.
            guard fields["crit"] == nil else { throw .malformed }
            header = Header(algorithm: algorithm, keyID: keyID)
            signingInput = token[..<pieces[1].endIndex]
            self.payload = payload
            self.signature = signature
        }

        func claims() throws(IssuerTokenRefusal) -> [String: Claim] { try Self.object(payload) }

        /// A JSON object with each key once (a claim given twice is ambiguous).
        static func object(_ bytes: [UInt8]) throws(IssuerTokenRefusal) -> [String: Claim] {
            do {
                try StrictJSON.check(bytes)
                return try JSONDecoder().decode([String: Claim].self, from: Data(bytes))
            } catch {
                throw .malformed
            }
        }
    }
}

/// A claim's value, as far as the checks read it.
enum Claim: Decodable, Equatable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case strings([String])
    case null
    /// Anything else (an object, a mixed array): present, and not what a check wants.
    case other

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let strings = try? value.decode([String].self) {
            self = .strings(strings)
        } else {
            self = .other
        }
    }
}
