import Crypto
import Foundation
import _CryptoExtras

/// An issuer's public signing keys, read from its JWKS document (RFC 7517): RSA keys of at
/// least 2,048 bits, P-256 and Ed25519 keys. Keys of another type or curve, for encryption
/// (`use: enc`), or that do not parse are left out, so one odd key does not hide the rest.
public struct JSONWebKeySet: Sendable {
    /// A key as a signature is checked with.
    enum Key: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)

        var algorithm: TrustedIssuer.Algorithm {
            switch self {
            case .rsa: .rs256
            case .p256: .es256
            case .ed25519: .edDSA
            }
        }
    }

    struct Entry: Sendable {
        let id: String?
        let key: Key
    }

    let entries: [Entry]

    /// The key ids the set holds (nil for a key without one).
    public var keyIDs: [String?] { entries.map(\.id) }

    /// Reads a JWKS document; one that is not `{"keys": [...]}` throws.
    public init(json: some Collection<UInt8>) throws {
        let document = try JSONDecoder().decode(Document.self, from: Data(json))
        entries = document.keys.compactMap { $0.entry }
    }

    /// The key that checks a token signed with `algorithm` under `keyID`: the one of that id
    /// (of the algorithm's type), or, for a token without a key id, the only key of that type.
    func key(id keyID: String?, for algorithm: TrustedIssuer.Algorithm) -> Key? {
        let fitting = entries.filter { $0.key.algorithm == algorithm }
        guard let keyID else { return fitting.count == 1 ? fitting[0].key : nil }
        return fitting.first { $0.id == keyID }?.key
    }

    private struct Document: Decodable {
        let keys: [JSONWebKey]
    }

    /// One key of the document as written.
    private struct JSONWebKey: Decodable {
        let kty: String?
        let kid: String?
        let use: String?
        let alg: String?
        let crv: String?
        let n: String?
        let e: String?
        let x: String?
        let y: String?

        var entry: Entry? {
            guard use == nil || use == "sig", let key = try? parsed() else { return nil }
            // A key that names its algorithm is used for that one only.
            if let alg, alg != key.algorithm.rawValue { return nil }
            return Entry(id: kid, key: key)
        }

        private func parsed() throws -> Key? {
            func bytes(_ text: String?) -> [UInt8]? { text.flatMap(Base64URL.decode) }
            switch (kty, crv) {
            case ("RSA", _):
                guard let n = bytes(n), let e = bytes(e) else { return nil }
                // swift-crypto refuses keys under 2,048 bits.
                return .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            case ("EC", "P-256"):
                guard let x = bytes(x), let y = bytes(y), x.count == 32, y.count == 32 else { return nil }
                return .p256(try P256.Signing.PublicKey(rawRepresentation: x + y))
            case ("OKP", "Ed25519"):
                guard let x = bytes(x) else { return nil }
                return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            default:
                return nil
            }
        }
    }
}
