import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Groups, applications, roles and role grants (`cloud` schema).
public struct PostgresDirectoryRepository: DirectoryRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func createGroup(name: String) async throws -> UserGroup {
        do {
            let row = try await database.client.query(
                "INSERT INTO cloud.user_group (name) VALUES (\(name)) RETURNING id, name, created_at", logger: logger
            ).first((Int64, String, Date).self)
            guard let (id, name, createdAt) = row else { throw MissingRowError() }
            return UserGroup(id: id, name: name, createdAt: createdAt)
        } catch let error as PSQLError where error.isUniqueViolation {
            throw ParleyError.conflict(.conflict, "A group with this name exists.")
        }
    }

    public func addMember(groupID: Int64, userID: Int64) async throws {
        try await link(userID, to: .group(groupID), missing: "The group or the user does not exist.")
    }

    public func removeMember(groupID: Int64, userID: Int64) async throws -> Bool {
        try await unlink(userID, from: .group(groupID))
    }

    public func applications() async throws -> [Application] {
        let rows = try await database.client.query(
            """
            SELECT a.id, a.code, a.name, r.id, r.code, r.name, r.rank
            FROM cloud.app a LEFT JOIN cloud.role r ON r.app_id = a.id
            ORDER BY a.code, r.rank, r.code
            """, logger: logger)
        var applications: [Application] = []
        for try await (appID, appCode, appName, roleID, roleCode, roleName, rank) in rows.decode(
            (Int64, String, String, Int64?, String?, String?, Int?).self)
        {
            let role = roleID.map { Role(id: $0, code: roleCode ?? "", name: roleName ?? "", rank: rank ?? 0) }
            if let last = applications.last, last.id == appID {
                applications[applications.count - 1] = Application(
                    id: appID, code: appCode, name: appName, roles: last.roles + (role.map { [$0] } ?? []))
            } else {
                applications.append(
                    Application(id: appID, code: appCode, name: appName, roles: role.map { [$0] } ?? []))
            }
        }
        return applications
    }

    public func createRole(appCode: String, code: String, name: String, rank: Int) async throws -> Role {
        do {
            return try await database.transaction(logger: logger) { connection in
                try await connection.query(
                    "INSERT INTO cloud.app (code, name) VALUES (\(appCode), \(appCode)) ON CONFLICT (code) DO NOTHING",
                    logger: logger)
                let row = try await connection.query(
                    """
                    INSERT INTO cloud.role (app_id, code, name, rank)
                    SELECT id, \(code), \(name), \(rank) FROM cloud.app WHERE code = \(appCode)
                    RETURNING id, code, name, rank
                    """, logger: logger
                ).first((Int64, String, String, Int).self)
                guard let (id, code, name, rank) = row else { throw MissingRowError() }
                return Role(id: id, code: code, name: name, rank: rank)
            }
        } catch let error as PSQLError where error.isUniqueViolation {
            throw ParleyError.conflict(.conflict, "The application has a role with this code.")
        }
    }

    public func grantRole(userID: Int64, roleID: Int64) async throws {
        try await link(userID, to: .appRole(roleID), missing: "The user or the role does not exist.")
    }

    public func revokeRole(userID: Int64, roleID: Int64) async throws -> Bool {
        try await unlink(userID, from: .appRole(roleID))
    }

    /// What links a user to rooms: a group's membership or an application role's grant.
    enum Link {
        case group(Int64)
        case appRole(Int64)

        func insert(userID: Int64) -> PostgresQuery {
            switch self {
            case .group(let id):
                """
                INSERT INTO cloud.user_account_to_user_group (user_group_id, user_account_id)
                VALUES (\(id), \(userID)) ON CONFLICT DO NOTHING
                """
            case .appRole(let id):
                """
                INSERT INTO cloud.user_account_to_role (user_account_id, role_id)
                VALUES (\(userID), \(id)) ON CONFLICT DO NOTHING
                """
            }
        }

        func delete(userID: Int64) -> PostgresQuery {
            switch self {
            case .group(let id):
                """
                DELETE FROM cloud.user_account_to_user_group
                WHERE user_group_id = \(id) AND user_account_id = \(userID) RETURNING 1
                """
            case .appRole(let id):
                """
                DELETE FROM cloud.user_account_to_role
                WHERE user_account_id = \(userID) AND role_id = \(id) RETURNING 1
                """
            }
        }

        var rooms: PostgresQuery {
            switch self {
            case .group(let id):
                "SELECT chat_room_id FROM messenger.chat_room_to_user_group WHERE user_group_id = \(id)"
            case .appRole(let id): "SELECT chat_room_id FROM messenger.chat_room_to_app_role WHERE app_role_id = \(id)"
            }
        }
    }

    /// Adds the link (idempotent); `not-found` when either end does not exist.
    private func link(_ userID: Int64, to link: Link, missing: String) async throws {
        do {
            _ = try await changingRooms(of: userID, linkedTo: link) { connection in
                try await connection.query(link.insert(userID: userID), logger: logger)
                return true
            }
        } catch let error as PSQLError where error.isForeignKeyViolation {
            throw ParleyError.notFound(missing)
        }
    }

    /// Removes the link; false when there was none.
    private func unlink(_ userID: Int64, from link: Link) async throws -> Bool {
        try await changingRooms(of: userID, linkedTo: link) { connection in
            try await connection.query(link.delete(userID: userID), logger: logger).first(Int.self) != nil
        }
    }

    /// Runs a change of a user's groups or roles, and records the membership events of every
    /// room linked to that group or role whose access for the user changed.
    private func changingRooms(
        of userID: Int64, linkedTo link: Link, _ change: @escaping @Sendable (PostgresConnection) async throws -> Bool
    ) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            let rooms = try await connection.query(link.rooms, logger: logger).all(Int64.self)
            let before = try await readableRooms(rooms, userID: userID, on: connection)
            guard try await change(connection) else { return false }
            let after = try await readableRooms(rooms, userID: userID, on: connection)
            for room in rooms {
                let serial = try await connection.query(
                    """
                    UPDATE messenger.chat_room SET updated_at = clock_timestamp() WHERE id = \(room)
                    RETURNING (extract(epoch FROM updated_at) * 1000000)::bigint
                    """, logger: logger
                ).single(Int64.self)
                let (was, `is`) = (before.contains(room), after.contains(room))
                try await Outbox.record(
                    .membersChanged(
                        MembersChanged(
                            roomId: room, byId: 0, serial: serial, addedIds: !was && `is` ? [userID] : [],
                            removedIds: was && !`is` ? [userID] : [])), on: connection, logger: logger)
            }
            return true
        }
    }

    private func readableRooms(_ rooms: [Int64], userID: Int64, on connection: PostgresConnection) async throws
        -> Set<Int64>
    {
        guard !rooms.isEmpty else { return [] }
        return Set(
            try await connection.query(
                """
                SELECT DISTINCT chat_room_id FROM messenger.room_membership
                WHERE chat_room_id = ANY(\(rooms)) AND user_account_id = \(userID)
                """, logger: logger
            ).all(Int64.self))
    }
}
