import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Accounts in `cloud.user_account`.
public struct PostgresUserRepository: UserRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func create(_ user: NewUser) async throws -> User {
        do {
            let rows = try await database.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash, is_admin)
                VALUES (\(user.email), \(user.firstName), \(user.lastName), \(user.passwordHash), \(user.isAdmin))
                RETURNING id, email, first_name, last_name, is_admin, created_at
                """,
                logger: logger
            )
            for try await row in rows.decode(UserRow.self) { return User(row) }
            throw ParleyError(.internalError, "The account was not created.")
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw ParleyError.conflict(.emailTaken, "An account with this e-mail exists.")
        }
    }

    public func find(id: Int64) async throws -> User? {
        let rows = try await database.client.query(
            "SELECT id, email, first_name, last_name, is_admin, created_at FROM cloud.user_account WHERE id = \(id)",
            logger: logger
        )
        for try await row in rows.decode(UserRow.self) { return User(row) }
        return nil
    }
}

/// The columns every user query selects, in order.
typealias UserRow = (Int64, String, String, String, Bool, Date)

extension User {
    init(_ row: UserRow) {
        self.init(id: row.0, email: row.1, firstName: row.2, lastName: row.3, isAdmin: row.4, createdAt: row.5)
    }
}
