import Foundation

/// Issues, rotates, revokes and checks server keys; limits each key's requests.
public struct APIKeyService: Sendable {
    public static let secretPrefix = "pk_"
    /// The most a rotated key's old secret stays valid.
    public static let maximumGrace = 30 * 86_400

    let keys: any APIKeyRepository
    let buckets: (any TokenBuckets)?
    let perKey: RateBucket
    /// The issuer a key names when its creator names none.
    let defaultIssuer: String
    let now: @Sendable () -> Date

    public init(
        keys: any APIKeyRepository, buckets: (any TokenBuckets)?,
        perKey: RateBucket = RateBucket(perSecond: 50, burst: 50), defaultIssuer: String = "parley",
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.keys = keys
        self.buckets = buckets
        self.perKey = perKey
        self.defaultIssuer = defaultIssuer
        self.now = now
    }

    public func issue(
        name: String, scopes: [APIKeyScope], issuer: String?, expiresAt: Date?, by userID: Int64?
    ) async throws -> IssuedAPIKey {
        let name = try TextRule.validated(name, field: "name", length: 1...100)
        guard !scopes.isEmpty else {
            throw ParleyError.invalidRequest("a key needs at least one scope", field: "scopes")
        }
        if let expiresAt, expiresAt <= now() {
            throw ParleyError.invalidRequest("expiresAt must be in the future", field: "expiresAt")
        }
        let issuer = try issuer.map { try TextRule.validated($0, field: "issuer", length: 1...1000) } ?? defaultIssuer
        let secret = Self.newSecret()
        let key = try await keys.create(
            name: name, scopes: Array(Set(scopes)).sorted { $0.rawValue < $1.rawValue }, issuer: issuer,
            expiresAt: expiresAt, secretHash: secret.hash, createdBy: userID)
        return IssuedAPIKey(key: key, secret: secret.value)
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [APIKey] {
        try await keys.list(afterID: afterID, limit: limit)
    }

    public func revoke(id: Int64) async throws {
        guard try await keys.revoke(id: id) else { throw ParleyError.notFound("No such key.") }
    }

    /// A new secret; the old one stays valid for `graceSeconds` (0 to 30 days).
    public func rotate(id: Int64, graceSeconds: Int) async throws -> IssuedAPIKey {
        guard (0...Self.maximumGrace).contains(graceSeconds) else {
            throw ParleyError.invalidRequest(
                "graceSeconds must be 0 to \(Self.maximumGrace)", field: "graceSeconds")
        }
        let secret = Self.newSecret()
        guard
            let key = try await keys.rotate(
                id: id, secretHash: secret.hash, graceUntil: now().addingTimeInterval(TimeInterval(graceSeconds)))
        else { throw ParleyError.notFound("No such key.") }
        return IssuedAPIKey(key: key, secret: secret.value)
    }

    /// The key of a `pk_…` bearer secret, within its budget; nil for a secret of another kind.
    /// An unknown, revoked or expired key is `unauthorized`; one over its budget `rate-limited`.
    public func authenticate(_ secret: String) async throws -> APIKey? {
        guard secret.hasPrefix(Self.secretPrefix) else { return nil }
        guard secret.utf8.count <= 256,
            let key = try await keys.authenticate(secretHash: OpaqueToken(value: secret).hash, now: now())
        else { throw ParleyError(.unauthorized, "The API key is unknown, revoked or expired.") }
        if let buckets {
            let allowance = try await buckets.take(["api-key:\(key.id)": 1], from: perKey)["api-key:\(key.id)"]
            if let allowance, allowance.allowed < 1 {
                throw ParleyError.tooMany("requests of this key", retryAfter: allowance.retryAfter)
            }
        }
        return key
    }

    /// Whom a key acts as on the admin routes: one with the `admin` scope, as the administrator
    /// who issued it while they still are one (`forbidden` otherwise). A key has no session.
    public func administrator(actingFor key: APIKey) async throws -> AuthenticatedUser {
        guard key.scopes.contains(.admin) else {
            throw ParleyError(.forbidden, "The admin routes take a key with the scope admin.")
        }
        guard let userID = try await keys.activeAdministrator(issuing: key.id) else {
            throw ParleyError(.forbidden, "The administrator who issued this key no longer is one.")
        }
        return AuthenticatedUser(
            userID: userID, sessionID: 0, deviceID: nil, isAdmin: true, expiresAt: key.expiresAt ?? .distantFuture)
    }

    static func newSecret() -> OpaqueToken {
        OpaqueToken(value: secretPrefix + OpaqueToken.generate().value)
    }
}
