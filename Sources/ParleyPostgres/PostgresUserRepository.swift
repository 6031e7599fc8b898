import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Accounts in `cloud.user_account`.
public struct PostgresUserRepository: UserRepository {
    let database: PostgresPool
    let logger: Logger
    /// Signs the URLs of avatars.
    let fileLinks: FileLinks

    /// - Parameter fileLinks: the deployment's file-link key, so that an avatar URL signed by
    ///   one process opens through every other.
    public init(database: PostgresPool, logger: Logger, fileLinks: FileLinks) {
        self.database = database
        self.logger = logger
        self.fileLinks = fileLinks
    }

    public func create(_ user: NewUser) async throws -> User {
        do {
            let rows = try await database.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash, is_admin)
                VALUES (\(user.email), \(user.firstName), \(user.lastName), \(user.passwordHash), \(user.isAdmin))
                RETURNING \(unescaped: UserRecord.columns("user_account"))
                """,
                logger: logger
            )
            for try await row in rows.decode(UserRecord.Row.self) { return try UserRecord.user(row, links: fileLinks) }
            throw ParleyError(.internalError, "The account was not created.")
        } catch let error as PSQLError where error.isUniqueViolation {
            throw ParleyError.conflict(.emailTaken, "An account with this e-mail exists.")
        }
    }

    public func credentials(email: String) async throws -> (user: User, passwordHash: String)? {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: UserRecord.columns("u")), u.password_hash
            FROM cloud.user_account u WHERE lower(u.email) = lower(\(email)) AND u.deleted_at IS NULL
            """,
            logger: logger
        )
        for try await row in rows.decode((Int64, String, String, String, Bool, Date, String?, String).self) {
            return (
                try UserRecord.user((row.0, row.1, row.2, row.3, row.4, row.5, row.6), links: fileLinks), row.7
            )
        }
        return nil
    }

    public func passwordHash(userID: Int64) async throws -> String? {
        try await database.client.query(
            "SELECT password_hash FROM cloud.user_account WHERE id = \(userID) AND deleted_at IS NULL", logger: logger
        ).first(String.self)
    }

    public func update(id: Int64, firstName: String?, lastName: String?, passwordHash: String?) async throws -> User? {
        let rows = try await database.client.query(
            """
            UPDATE cloud.user_account
            SET first_name = coalesce(\(firstName), first_name), last_name = coalesce(\(lastName), last_name),
                password_hash = coalesce(\(passwordHash), password_hash), updated_at = now()
            WHERE id = \(id)
            RETURNING \(unescaped: UserRecord.columns("user_account"))
            """,
            logger: logger
        )
        for try await row in rows.decode(UserRecord.Row.self) { return try UserRecord.user(row, links: fileLinks) }
        return nil
    }

    public func setDeactivated(id: Int64, deactivated: Bool) async throws -> Bool {
        try await database.client.query(
            """
            UPDATE cloud.user_account
            SET deactivated_at = CASE WHEN \(deactivated) THEN coalesce(deactivated_at, now()) END
            WHERE id = \(id) RETURNING 1
            """, logger: logger
        ).first(Int32.self) != nil
    }

    public func isDeactivated(id: Int64) async throws -> Bool {
        try await database.client.query(
            "SELECT deactivated_at IS NOT NULL OR deleted_at IS NOT NULL FROM cloud.user_account WHERE id = \(id)",
            logger: logger
        ).first(Bool.self) ?? false
    }

    public func search(
        prefix: String?, emailPrefix: Bool, roomMatesOf viewer: Int64?, after cursor: Int64?, limit: Int
    ) async throws -> [User] {
        // LIKE wildcards in the client's text are matched literally.
        let pattern = prefix.map { text in
            text.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        }
        let rows = try await database.reads.query(
            """
            SELECT \(unescaped: UserRecord.columns("u")) FROM cloud.user_account u
            WHERE u.id > \(cursor ?? 0) AND u.deleted_at IS NULL
              AND (\(pattern)::text IS NULL OR lower(u.first_name) LIKE \(pattern) OR lower(u.last_name) LIKE \(pattern)
                   OR lower(u.email) = lower(\(prefix)) OR (\(emailPrefix) AND lower(u.email) LIKE \(pattern)))
              AND (\(viewer)::bigint IS NULL OR u.id = \(viewer) OR EXISTS (
                   SELECT 1 FROM messenger.room_membership mine
                   JOIN messenger.room_membership theirs ON theirs.chat_room_id = mine.chat_room_id
                   WHERE mine.user_account_id = \(viewer) AND theirs.user_account_id = u.id))
            ORDER BY u.id LIMIT \(limit)
            """,
            logger: logger
        )
        var users: [User] = []
        for row in try rows.map({ try $0.decode(UserRecord.Row.self) }) {
            users.append(try UserRecord.user(row, links: fileLinks))
        }
        return users
    }

    public func find(id: Int64) async throws -> User? {
        let rows = try await database.client.query(
            "SELECT \(unescaped: UserRecord.columns("u")) FROM cloud.user_account u WHERE u.id = \(id)",
            logger: logger
        )
        for try await row in rows.decode(UserRecord.Row.self) { return try UserRecord.user(row, links: fileLinks) }
        return nil
    }
}
