import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Issuers' users linked to accounts, in `cloud.user_identity`.
public struct PostgresIdentityRepository: IdentityRepository {
    let database: PostgresPool
    let logger: Logger
    /// Signs the URLs of avatars.
    let fileLinks: FileLinks

    public init(database: PostgresPool, logger: Logger, fileLinks: FileLinks) {
        self.database = database
        self.logger = logger
        self.fileLinks = fileLinks
    }

    public func user(of identity: ExternalIdentity) async throws -> User? {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: UserRecord.columns("u")) FROM cloud.user_identity i
            JOIN cloud.user_account u ON u.id = i.user_account_id
            WHERE i.issuer = \(identity.issuer) AND i.subject = \(identity.subject) AND u.deleted_at IS NULL
            """,
            logger: logger
        )
        for try await row in rows.decode(UserRecord.Row.self) { return try UserRecord.user(row, links: fileLinks) }
        return nil
    }

    public func userIDs(issuer: String, subjects: [String]) async throws -> [String: Int64] {
        let rows = try await database.client.query(
            """
            SELECT i.subject, u.id FROM cloud.user_identity i
            JOIN cloud.user_account u ON u.id = i.user_account_id
            WHERE i.issuer = \(issuer) AND i.subject = ANY(\(subjects)) AND u.deleted_at IS NULL
            """,
            logger: logger)
        var found: [String: Int64] = [:]
        for try await (subject, id) in rows.decode((String, Int64).self) { found[subject] = id }
        return found
    }

    public func create(_ user: NewUser, for identity: ExternalIdentity) async throws -> User {
        do {
            return try await database.transaction(logger: logger) { [fileLinks, logger] connection in
                let created = try await connection.query(
                    """
                    INSERT INTO cloud.user_account (email, first_name, last_name, password_hash, is_admin)
                    VALUES (\(user.email), \(user.firstName), \(user.lastName), \(user.passwordHash), \(user.isAdmin))
                    RETURNING \(unescaped: UserRecord.columns("user_account"))
                    """,
                    logger: logger
                ).single(UserRecord.Row.self)
                try await connection.query(
                    """
                    INSERT INTO cloud.user_identity (issuer, subject, user_account_id)
                    VALUES (\(identity.issuer), \(identity.subject), \(created.0))
                    """,
                    logger: logger)
                return try UserRecord.user(created, links: fileLinks)
            }
        } catch let error as PSQLError where error.isUniqueViolation {
            throw Self.conflict(error)
        }
    }

    public func link(_ identity: ExternalIdentity, to userID: Int64) async throws -> Bool {
        do {
            try await database.client.query(
                """
                INSERT INTO cloud.user_identity (issuer, subject, user_account_id)
                VALUES (\(identity.issuer), \(identity.subject), \(userID))
                """,
                logger: logger)
            return true
        } catch let error as PSQLError where error.isUniqueViolation {
            if error.serverInfo?[.constraintName] == "user_identity_user_issuer_key" { return false }
            throw ParleyError.identityLinked
        }
    }

    public func update(userID: Int64, email: String?, firstName: String?, lastName: String?) async throws -> User? {
        do {
            let rows = try await database.client.query(
                """
                UPDATE cloud.user_account
                SET email = coalesce(\(email), email), first_name = coalesce(\(firstName), first_name),
                    last_name = coalesce(\(lastName), last_name), updated_at = now()
                WHERE id = \(userID) AND deleted_at IS NULL
                RETURNING \(unescaped: UserRecord.columns("user_account"))
                """,
                logger: logger
            )
            for try await row in rows.decode(UserRecord.Row.self) { return try UserRecord.user(row, links: fileLinks) }
            return nil
        } catch let error as PSQLError where error.isUniqueViolation {
            throw Self.conflict(error)
        }
    }

    /// The e-mail's index (`user_account_email_key`) or the identity's own key.
    private static func conflict(_ error: PSQLError) -> ParleyError {
        switch error.serverInfo?[.constraintName] {
        case "user_identity_subject_key", "user_identity_user_issuer_key": .identityLinked
        default: .conflict(.emailTaken, "An account with this e-mail exists.")
        }
    }
}
