import Foundation

/// Who an issuer's token proves its bearer is: the issuer named by its `iss` among those
/// trusted, that issuer's keys, and the checks of ``IssuerToken``.
public struct IssuerTokenVerifier: Sendable {
    public let issuers: [TrustedIssuer]
    let keys: IssuerKeys
    let now: @Sendable () -> Date

    public init(issuers: [TrustedIssuer], keys: IssuerKeys, now: @escaping @Sendable () -> Date = { Date() }) {
        self.issuers = issuers
        self.keys = keys
        self.now = now
    }

    /// The identity, or ``IssuerTokenRefusal``; a failure to read the issuer's keys is thrown
    /// as ``IssuerKeysUnavailable`` (the issuer is unavailable, not the token wrong).
    public func identity(of token: String) async throws -> IssuedIdentity {
        let parsed = try IssuerToken.Parsed(token)
        guard let issuer = issuers.first(where: { $0.issuer == parsed.claimedIssuer }) else {
            throw IssuerTokenRefusal.wrongIssuer
        }
        // Refused before any key is read: an issuer that is down turns no forgery into a 503.
        guard let algorithm = TrustedIssuer.Algorithm(rawValue: parsed.header.algorithm),
            issuer.algorithms.contains(algorithm)
        else { throw IssuerTokenRefusal.algorithmNotAllowed(parsed.header.algorithm) }
        let held = try await keys.keys(for: issuer)
        let first = Result { () throws(IssuerTokenRefusal) in
            try IssuerToken.verify(parsed, from: issuer, keys: held, now: now())
        }
        guard case .failure(.unknownKey) = first else { return try first.get() }
        // Perhaps rotated since the keys were read: once more with the issuer's newest.
        let newest = try await keys.keys(for: issuer, unknownKey: true)
        return try IssuerToken.verify(parsed, from: issuer, keys: newest, now: now())
    }
}
