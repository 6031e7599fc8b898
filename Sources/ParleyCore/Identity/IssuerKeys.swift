import Foundation

/// Reads an issuer's key document (JWKS) from where its entry says: the port the HTTPS and
/// file readers implement.
public protocol IssuerKeyFetcher: Sendable {
    /// The document, and how long it may be kept as the source says (`Cache-Control:
    /// max-age`; nil when it says nothing).
    func fetch(_ source: TrustedIssuer.KeySource) async throws -> (document: [UInt8], maxAge: Duration?)
}

/// The trusted issuers' keys, kept between exchanges: as long as the source allows (at least
/// ``minimumAge``, at most ``maximumAge``), and read again on a key id the set does not hold
/// (a rotation), at most once per ``refreshInterval`` per issuer, so that tokens naming
/// made-up key ids cannot make Parley hammer the issuer.
public actor IssuerKeys {
    public static let minimumAge: Duration = .seconds(60)
    public static let maximumAge: Duration = .seconds(86_400)
    public static let refreshInterval: Duration = .seconds(60)

    private struct Held {
        let keys: JSONWebKeySet
        let fetchedAt: ContinuousClock.Instant
        let keepFor: Duration
    }

    private let fetcher: any IssuerKeyFetcher
    private let now: @Sendable () -> ContinuousClock.Instant
    private var held: [String: Held] = [:]

    public init(
        fetcher: any IssuerKeyFetcher, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.fetcher = fetcher
        self.now = now
    }

    /// The issuer's keys; with `unknownKey`, read again unless they were read within
    /// ``refreshInterval``.
    public func keys(for issuer: TrustedIssuer, unknownKey: Bool = false) async throws -> JSONWebKeySet {
        let at = now()
        if let current = held[issuer.issuer] {
            let age = current.fetchedAt.duration(to: at)
            let fresh = age < current.keepFor
            if fresh && (!unknownKey || age < Self.refreshInterval) { return current.keys }
        }
        let (document, maxAge) = try await fetcher.fetch(issuer.keys)
        let keys = try JSONWebKeySet(json: document)
        let keepFor = min(max(maxAge ?? Self.minimumAge, Self.minimumAge), Self.maximumAge)
        held[issuer.issuer] = Held(keys: keys, fetchedAt: at, keepFor: keepFor)
        return keys
    }
}

/// Who an issuer's token proves its bearer is: the issuer named by its `iss` among those
/// trusted, that issuer's keys, and the checks of ``IssuerToken``.
public struct IssuerTokenVerifier: Sendable {
    let issuers: [TrustedIssuer]
    let keys: IssuerKeys
    let now: @Sendable () -> Date

    public init(issuers: [TrustedIssuer], keys: IssuerKeys, now: @escaping @Sendable () -> Date = { Date() }) {
        self.issuers = issuers
        self.keys = keys
        self.now = now
    }

    /// The identity, or ``IssuerTokenRefusal``; a failure to read the issuer's keys is thrown
    /// as it is (the issuer is unavailable, not the token wrong).
    public func identity(of token: String) async throws -> IssuedIdentity {
        let claimed = try IssuerToken.claimedIssuer(of: token)
        guard let issuer = issuers.first(where: { $0.issuer == claimed }) else {
            throw IssuerTokenRefusal.wrongIssuer
        }
        let held = try await keys.keys(for: issuer)
        let first = Result { () throws(IssuerTokenRefusal) in
            try IssuerToken.verify(token, from: issuer, keys: held, now: now())
        }
        guard case .failure(.unknownKey) = first else { return try first.get() }
        // Perhaps rotated since the keys were read: once more with the issuer's newest.
        let newest = try await keys.keys(for: issuer, unknownKey: true)
        return try IssuerToken.verify(token, from: issuer, keys: newest, now: now())
    }
}
