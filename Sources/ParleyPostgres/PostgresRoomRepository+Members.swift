import Foundation
import ParleyCore
import PostgresNIO

/// Memberships: direct, through groups and through application roles.
extension PostgresRoomRepository {
    public func roles(of members: Set<RoomUser>) async throws -> [RoomUser: RoomRole] {
        if members.count == 1, let member = members.first {
            let role = try await effectiveRole(roomID: member.roomID, userID: member.userID, on: nil)
            return role.map { [member: $0] } ?? [:]
        }
        let pairs = Array(members)
        let rows = try await database.client.execute(
            EffectiveRolesStatement(roomIDs: pairs.map(\.roomID), userIDs: pairs.map(\.userID)), logger: logger
        ).allRows()
        var roles: [RoomUser: RoomRole] = [:]
        for (roomID, userID, rank) in rows {
            if let role = rank.flatMap(RoomRole.init(rank:)) { roles[RoomUser(roomID: roomID, userID: userID)] = role }
        }
        return roles
    }

    public func members(roomID: Int64, after: Int64?, limit: Int) async throws -> [Member] {
        try await memberRows(roomID: roomID, userID: nil, after: after, limit: limit)
    }

    public func member(roomID: Int64, userID: Int64) async throws -> Member? {
        try await memberRows(roomID: roomID, userID: userID, after: nil, limit: 1).first
    }

    private func memberRows(roomID: Int64, userID: Int64?, after: Int64?, limit: Int) async throws -> [Member] {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: UserRecord.columns("u")), max(r.rank),
                   array_agg(DISTINCT m.via ORDER BY m.via)
            FROM messenger.room_membership m
            JOIN cloud.role r ON r.id = m.role_id
            JOIN cloud.user_account u ON u.id = m.user_account_id
            WHERE m.chat_room_id = \(roomID) AND (\(userID)::bigint IS NULL OR m.user_account_id = \(userID))
              AND m.user_account_id > coalesce(\(after)::bigint, 0)
            GROUP BY u.id ORDER BY u.id LIMIT \(limit)
            """, logger: logger)
        var members: [Member] = []
        for try await (id, email, first, last, admin, created, avatar, rank, via) in rows.decode(
            (Int64, String, String, String, Bool, Date, String?, Int, [String]).self)
        {
            members.append(
                Member(
                    user: try UserRecord.user((id, email, first, last, admin, created, avatar), links: fileLinks),
                    role: RoomRole(rank: rank) ?? .reader, via: via))
        }
        return members
    }

    public func setDirectMember(roomID: Int64, userID: Int64, role: RoomRole, by editorID: Int64) async throws {
        try await changeMembership(roomID: roomID, by: editorID) { connection in
            let exists = try await connection.query(
                "SELECT count(*) FROM cloud.user_account WHERE id = \(userID) AND deleted_at IS NULL", logger: logger
            ).first(Int.self)
            guard exists == 1 else { throw ParleyError.notFound("No such user.") }
            let wasAdmin = try await connection.query(
                """
                SELECT role_id = (\(unescaped: RoleSQL.idOf(.admin))) FROM messenger.chat_room_to_user_account
                WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
                """, logger: logger
            ).first(Bool.self)
            try await insertDirect(roomID: roomID, userID: userID, role: role, on: connection)
            try await connection.query(
                "DELETE FROM messenger.room_departure WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)",
                logger: logger)
            if wasAdmin == true, role != .admin {
                try await keepDirectAdmin(roomID: roomID, leaving: userID, on: connection)
            }
            return true
        }
    }

    public func removeDirectMember(roomID: Int64, userID: Int64, by editorID: Int64) async throws -> Bool {
        try await changeMembership(roomID: roomID, by: editorID) { connection in
            let wasAdmin = try await connection.query(
                """
                DELETE FROM messenger.chat_room_to_user_account
                WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
                RETURNING role_id = (\(unescaped: RoleSQL.idOf(.admin)))
                """, logger: logger
            ).first(Bool.self)
            if wasAdmin == true { try await keepDirectAdmin(roomID: roomID, leaving: userID, on: connection) }
            return wasAdmin != nil
        }
    }

    /// After a direct admin left or stepped down, a multiparty room keeps another: the last
    /// one may not (`last-admin`), unless their account is being erased, when the
    /// longest-standing direct member becomes admin. The room's lock, held by
    /// ``changeMembership``, makes two admins demoting each other at once take turns.
    private func keepDirectAdmin(roomID: Int64, leaving userID: Int64, on connection: PostgresConnection)
        async throws
    {
        let admin = RoleSQL.idOf(.admin)
        let state = try await connection.query(
            """
            SELECT (SELECT type = 'multiparty' FROM messenger.chat_room WHERE id = \(roomID)),
                   EXISTS (SELECT 1 FROM messenger.chat_room_to_user_account
                           WHERE chat_room_id = \(roomID) AND role_id = (\(unescaped: admin))),
                   EXISTS (SELECT 1 FROM cloud.user_account WHERE id = \(userID) AND deleted_at IS NOT NULL)
            """, logger: logger
        ).first((Bool, Bool, Bool).self)
        guard let (multiparty, hasAdmin, erased) = state, multiparty, !hasAdmin else { return }
        guard erased else {
            throw ParleyError(
                .lastAdmin, "The room's last admin cannot leave or step down; make another member admin first.")
        }
        try await connection.query(
            """
            UPDATE messenger.chat_room_to_user_account SET role_id = (\(unescaped: admin))
            WHERE chat_room_id = \(roomID) AND user_account_id = (
                SELECT user_account_id FROM messenger.chat_room_to_user_account
                WHERE chat_room_id = \(roomID) ORDER BY created_at, user_account_id LIMIT 1)
            """, logger: logger)
    }

    public func leave(roomID: Int64, userID: Int64) async throws -> Bool {
        try await changeMembership(roomID: roomID, by: userID) { connection in
            let state = try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM messenger.room_membership
                               WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)),
                       EXISTS (SELECT 1 FROM messenger.chat_room_to_user_group g
                               JOIN cloud.user_account_to_user_group ug ON ug.user_group_id = g.user_group_id
                               WHERE g.chat_room_id = \(roomID) AND g.required AND ug.user_account_id = \(userID))
                    OR EXISTS (SELECT 1 FROM messenger.chat_room_to_app_role a
                               JOIN cloud.user_account_to_role ur ON ur.role_id = a.app_role_id
                               WHERE a.chat_room_id = \(roomID) AND a.required AND ur.user_account_id = \(userID))
                """, logger: logger
            ).first((Bool, Bool).self)
            guard let (member, held) = state, member else { return false }
            if held {
                throw ParleyError(.forbidden, "A required group or application role keeps you in this room.")
            }
            let wasAdmin = try await connection.query(
                """
                DELETE FROM messenger.chat_room_to_user_account
                WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
                RETURNING role_id = (\(unescaped: RoleSQL.idOf(.admin)))
                """, logger: logger
            ).first(Bool.self)
            if wasAdmin == true { try await keepDirectAdmin(roomID: roomID, leaving: userID, on: connection) }
            // Every path but a required link ends with this row (messenger.room_membership),
            // and an add brings them back only as an invitation they accept.
            try await connection.query(
                """
                INSERT INTO messenger.room_departure (chat_room_id, user_account_id) VALUES (\(roomID), \(userID))
                ON CONFLICT (chat_room_id, user_account_id) DO UPDATE SET left_at = now()
                """, logger: logger)
            return true
        }
    }

    public func setGroup(roomID: Int64, groupID: Int64, role: RoomRole?, required: Bool, by editorID: Int64)
        async throws -> Bool
    {
        try await setLink(.group, roomID: roomID, linkID: groupID, role: role, required: required, by: editorID)
    }

    public func setAppRole(roomID: Int64, appRoleID: Int64, role: RoomRole?, required: Bool, by editorID: Int64)
        async throws -> Bool
    {
        try await setLink(.appRole, roomID: roomID, linkID: appRoleID, role: role, required: required, by: editorID)
    }

    /// A membership path other than the direct one: its table and key column (fixed names,
    /// never client input, so they are spliced into the SQL).
    enum LinkTable {
        case group, appRole

        var table: String {
            switch self {
            case .group: "messenger.chat_room_to_user_group"
            case .appRole: "messenger.chat_room_to_app_role"
            }
        }
        var column: String {
            switch self {
            case .group: "user_group_id"
            case .appRole: "app_role_id"
            }
        }
        var missing: String {
            switch self {
            case .group: "No such group."
            case .appRole: "No such application role."
            }
        }
    }

    /// Links (or, with a nil role, unlinks) a group or application role; false when there was
    /// nothing to unlink.
    private func setLink(
        _ link: LinkTable, roomID: Int64, linkID: Int64, role: RoomRole?, required: Bool, by editorID: Int64
    ) async throws -> Bool {
        try await changeMembership(roomID: roomID, by: editorID) { connection in
            guard let role else {
                return try await connection.query(
                    """
                    DELETE FROM \(unescaped: link.table)
                    WHERE chat_room_id = \(roomID) AND \(unescaped: link.column) = \(linkID) RETURNING 1
                    """, logger: logger
                ).first(Int.self) != nil
            }
            do {
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: link.table) (chat_room_id, \(unescaped: link.column), role_id, required)
                    VALUES (\(roomID), \(linkID), (\(unescaped: RoleSQL.idOf(role))), \(required))
                    ON CONFLICT (chat_room_id, \(unescaped: link.column))
                    DO UPDATE SET role_id = excluded.role_id, required = excluded.required
                    """, logger: logger)
            } catch let error as PSQLError where error.isForeignKeyViolation {
                throw ParleyError.notFound(link.missing)
            }
            return true
        }
    }

    /// Runs a membership change in a transaction and records its events: `members` on the
    /// room topic, and `added`/`removed` to each user who gained or lost the room.
    func changeMembership(
        roomID: Int64, by editorID: Int64, _ change: @escaping @Sendable (PostgresConnection) async throws -> Bool
    ) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            // Serialises membership changes of one room, so the before/after sets are exact.
            let live = try await connection.query(
                "SELECT 1 FROM messenger.chat_room WHERE id = \(roomID) AND deleted_at IS NULL FOR UPDATE",
                logger: logger
            ).first(Int32.self)
            // Deleted while the caller's role was checked: there is no room to change.
            guard live != nil else { throw ParleyError.notFound("No such room.") }
            let before = try await readerRoles(roomID: roomID, on: connection)
            guard try await change(connection) else { return false }
            let after = try await readerRoles(roomID: roomID, on: connection)
            let serial = try await touch(roomID: roomID, on: connection)
            let added = Set(after.keys).subtracting(before.keys).sorted()
            let removed = Set(before.keys).subtracting(after.keys).sorted()
            try await Outbox.record(
                .membersChanged(
                    MembersChanged(roomId: roomID, byId: editorID, serial: serial, addedIds: added, removedIds: removed)
                ),
                on: connection, logger: logger)
            return true
        }
    }

    /// Every user who can read the room, with their effective rank.
    func readerRoles(roomID: Int64, on connection: PostgresConnection) async throws -> [Int64: Int] {
        let rows = try await connection.query(
            """
            SELECT m.user_account_id, max(r.rank) FROM messenger.room_membership m
            JOIN cloud.role r ON r.id = m.role_id
            WHERE m.chat_room_id = \(roomID) GROUP BY m.user_account_id
            """, logger: logger)
        var roles: [Int64: Int] = [:]
        for try await (user, rank) in rows.decode((Int64, Int).self) { roles[user] = rank }
        return roles
    }
}

extension PostgresRoomRepository: RoomReaders {
    public func readerIDs(of chunks: Set<ReaderChunk>, limit: Int) async throws -> ChunkReaders {
        let chunks = Array(chunks)
        let rows = try await database.client.execute(
            ReaderIDsStatement(
                rooms: chunks.map(\.roomID), after: chunks.map(\.after), limit: Int32(clamping: limit)),
            logger: logger)
        var readers = ChunkReaders()
        for try await (room, after, user, version) in rows {
            readers.ids[ReaderChunk(roomID: room, after: after), default: []].append(user)
            readers.versions[room] = version
        }
        return readers
    }
}
