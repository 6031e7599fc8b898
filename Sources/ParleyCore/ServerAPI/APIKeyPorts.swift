import Foundation

/// Server keys, stored by the SHA-256 of their secret.
public protocol APIKeyRepository: Sendable {
    func create(
        name: String, scopes: [APIKeyScope], issuer: String, expiresAt: Date?, secretHash: [UInt8], createdBy: Int64?
    ) async throws -> APIKey
    /// Keys not revoked, oldest first, after `afterID`.
    func list(afterID: Int64?, limit: Int) async throws -> [APIKey]
    /// False when there is no such key (or it was revoked before).
    func revoke(id: Int64) async throws -> Bool
    /// Gives the key a new secret; the old one stays valid until `graceUntil` (now: not at
    /// all). Nil when there is no such key.
    func rotate(id: Int64, secretHash: [UInt8], graceUntil: Date) async throws -> APIKey?
    /// The key whose current secret (or previous one, within its grace) hashes to
    /// `secretHash`, not revoked nor expired at `now`; records the use.
    func authenticate(secretHash: [UInt8], now: Date) async throws -> APIKey?
    /// Who issued the key, while they are an administrator whose account is active; else nil.
    func activeAdministrator(issuing keyID: Int64) async throws -> Int64?
}

/// Who did what with the server API and the admin routes.
public protocol AuditLog: Sendable {
    func record(_ actor: ServerActor, action: String, target: String, address: String?) async throws
    /// Newest first, before the entry `beforeID`.
    func entries(beforeID: Int64?, limit: Int) async throws -> [AuditEntry]
}
