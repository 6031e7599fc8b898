import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Server keys (`cloud.api_key`) and the audit log (`cloud.audit_entry`).
public struct PostgresAPIKeyRepository: APIKeyRepository, AuditLog, ExpiringRecords {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    static let columns = "id, name, scopes, issuer, created_by_id, bot_id, created_at, expires_at, last_used_at"
    typealias Row = (Int64, String, [String], String, Int64?, Int64?, Date, Date?, Date?)

    static func key(_ row: Row) -> APIKey {
        APIKey(
            id: row.0, name: row.1, scopes: row.2.compactMap(APIKeyScope.init(rawValue:)), issuer: row.3,
            createdById: row.4, botId: row.5, createdAt: row.6, expiresAt: row.7, lastUsedAt: row.8)
    }

    public func activeAdministrator(issuing keyID: Int64) async throws -> Int64? {
        try await database.client.query(
            """
            SELECT u.id FROM cloud.api_key k JOIN cloud.user_account u ON u.id = k.created_by_id
            WHERE k.id = \(keyID) AND u.is_admin AND u.deleted_at IS NULL AND u.deactivated_at IS NULL
            """, logger: logger
        ).first(Int64.self)
    }

    public func create(
        name: String, scopes: [APIKeyScope], issuer: String, expiresAt: Date?, secretHash: [UInt8], createdBy: Int64?
    ) async throws -> APIKey {
        let row = try await database.client.query(
            """
            INSERT INTO cloud.api_key (name, scopes, issuer, expires_at, secret_hash, created_by_id)
            VALUES (\(name), \(scopes.map(\.rawValue)), \(issuer), \(expiresAt), \(Data(secretHash)), \(createdBy))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger
        ).single(Row.self)
        return Self.key(row)
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [APIKey] {
        try await database.client.query(
            """
            SELECT \(unescaped: Self.columns) FROM cloud.api_key
            WHERE revoked_at IS NULL AND id > \(afterID ?? 0) ORDER BY id LIMIT \(limit)
            """, logger: logger
        ).all(Row.self).map(Self.key)
    }

    public func revoke(id: Int64) async throws -> Bool {
        try await database.client.query(
            "UPDATE cloud.api_key SET revoked_at = clock_timestamp() WHERE id = \(id) AND revoked_at IS NULL RETURNING id",
            logger: logger
        ).first(Int64.self) != nil
    }

    public func rotate(id: Int64, secretHash: [UInt8], graceUntil: Date) async throws -> APIKey? {
        try await database.client.query(
            """
            UPDATE cloud.api_key
            SET previous_secret_hash = secret_hash, previous_valid_until = \(graceUntil),
                secret_hash = \(Data(secretHash))
            WHERE id = \(id) AND revoked_at IS NULL
            RETURNING \(unescaped: Self.columns)
            """, logger: logger
        ).first(Row.self).map(Self.key)
    }

    /// The use is recorded at most once a minute: a key calling 50 times a second writes no
    /// row each time.
    public func authenticate(secretHash: [UInt8], now: Date) async throws -> APIKey? {
        let hash = Data(secretHash)
        return try await database.client.query(
            """
            WITH k AS (
                SELECT \(unescaped: Self.columns) FROM cloud.api_key
                WHERE (secret_hash = \(hash) OR (previous_secret_hash = \(hash) AND previous_valid_until > \(now)))
                  AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > \(now))
            ), touched AS (
                UPDATE cloud.api_key a SET last_used_at = \(now) FROM k
                WHERE a.id = k.id AND (a.last_used_at IS NULL OR a.last_used_at < \(now) - interval '1 minute')
            )
            SELECT \(unescaped: Self.columns) FROM k
            """, logger: logger
        ).first(Row.self).map(Self.key)
    }

    public func record(_ actor: ServerActor, action: String, target: String, address: String?) async throws {
        let who = AuditEntry.Actor(actor)
        try await database.client.query(
            """
            INSERT INTO cloud.audit_entry (actor_type, actor_id, action, target, address)
            VALUES (\(who.type), \(who.id), \(action), \(target), \(address))
            """, logger: logger)
    }

    public func entries(beforeID: Int64?, limit: Int) async throws -> [AuditEntry] {
        try await database.client.query(
            """
            SELECT id, at, actor_type, actor_id, action, target, address FROM cloud.audit_entry
            WHERE \(beforeID)::bigint IS NULL OR id < \(beforeID) ORDER BY id DESC LIMIT \(limit)
            """, logger: logger
        ).all((Int64, Date, String, Int64, String, String, String?).self).map { row in
            AuditEntry(
                id: row.0, at: row.1, actor: AuditEntry.Actor(type: row.2, id: row.3),
                action: row.4, target: row.5, address: row.6)
        }
    }

    /// Audit entries made before `cutoff`.
    public func purge(before cutoff: Date, limit: Int) async throws -> Int {
        let purged = try await database.client.query(
            """
            WITH gone AS (
                DELETE FROM cloud.audit_entry WHERE id IN (
                    SELECT id FROM cloud.audit_entry WHERE at < \(cutoff) ORDER BY at LIMIT \(limit))
                RETURNING 1)
            SELECT count(*)::bigint FROM gone
            """, logger: logger
        ).single(Int64.self)
        return Int(purged)
    }
}
