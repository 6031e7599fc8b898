import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Invitations (`messenger.room_invitation`), departures (`messenger.room_departure`) and the
/// facts an add is decided by.
extension PostgresRoomRepository {
    public func blockedPairs(_ pairs: Set<UserPair>) async throws -> Set<UserPair> {
        let pairs = Array(pairs)
        let rows = try await database.client.query(
            """
            SELECT p.a, p.b FROM unnest(\(pairs.map(\.userID))::bigint[], \(pairs.map(\.otherID))::bigint[]) AS p(a, b)
            WHERE EXISTS (
                SELECT 1 FROM messenger.user_block b
                WHERE (b.blocker_id = p.a AND b.blocked_id = p.b) OR (b.blocker_id = p.b AND b.blocked_id = p.a))
            """, logger: logger)
        var blocked = Set<UserPair>()
        for try await (user, other) in rows.decode((Int64, Int64).self) { blocked.insert(UserPair(user, other)) }
        return blocked
    }

    public func shareRoom(_ userID: Int64, _ otherID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT EXISTS (
                SELECT 1 FROM messenger.room_membership mine
                JOIN messenger.room_membership theirs ON theirs.chat_room_id = mine.chat_room_id
                JOIN messenger.chat_room c ON c.id = mine.chat_room_id AND c.deleted_at IS NULL
                WHERE mine.user_account_id = \(userID) AND theirs.user_account_id = \(otherID))
            """, logger: logger
        ).first(Bool.self) ?? false
    }

    public func hasLeft(roomID: Int64, userID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT EXISTS (SELECT 1 FROM messenger.room_departure
                           WHERE chat_room_id = \(roomID) AND user_account_id = \(userID))
            """, logger: logger
        ).first(Bool.self) ?? false
    }

    public func invite(roomID: Int64, inviteeID: Int64, role: RoomRole, by inviterID: Int64) async throws -> Invitation
    {
        try await database.transaction(logger: logger) { connection in
            let created = try await connection.query(
                """
                INSERT INTO messenger.room_invitation (chat_room_id, invitee_id, inviter_id, role_id)
                SELECT \(roomID), u.id, \(inviterID), (\(unescaped: RoleSQL.idOf(role)))
                FROM cloud.user_account u WHERE u.id = \(inviteeID) AND u.deleted_at IS NULL
                ON CONFLICT (chat_room_id, invitee_id) DO NOTHING
                RETURNING id
                """, logger: logger
            ).first(Int64.self)
            guard
                let invitation = try await invitations(
                    of: inviteeID, roomID: roomID, after: 0, limit: 1, on: connection
                ).first
            else { throw ParleyError.notFound("No such user.") }
            if created != nil {
                try await Outbox.record(
                    .invitationCreated(InvitationCreated(inviteeId: inviteeID, invitation: invitation)),
                    on: connection, logger: logger)
            }
            return invitation
        }
    }

    public func invitations(for userID: Int64, after: Int64?, limit: Int) async throws -> [Invitation] {
        try await database.client.withConnection { connection in
            try await invitations(of: userID, roomID: nil, after: after ?? 0, limit: limit, on: connection)
        }
    }

    public func accept(invitationID: Int64, by userID: Int64) async throws -> Int64? {
        let roomID = try await database.client.query(
            "SELECT chat_room_id FROM messenger.room_invitation WHERE id = \(invitationID) AND invitee_id = \(userID)",
            logger: logger
        ).first(Int64.self)
        guard let roomID else { return nil }
        let joined = try await changeMembership(roomID: roomID, by: userID) { connection in
            let role = try await connection.query(
                """
                DELETE FROM messenger.room_invitation WHERE id = \(invitationID) AND invitee_id = \(userID)
                RETURNING role_id
                """, logger: logger
            ).first(Int32.self)
            guard let role else { return false }
            try await connection.query(
                """
                DELETE FROM messenger.room_departure WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO messenger.chat_room_to_user_account (chat_room_id, user_account_id, role_id)
                VALUES (\(roomID), \(userID), \(role))
                ON CONFLICT (chat_room_id, user_account_id) DO UPDATE SET role_id = excluded.role_id
                """, logger: logger)
            return true
        }
        return joined ? roomID : nil
    }

    public func decline(invitationID: Int64, by userID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            DELETE FROM messenger.room_invitation WHERE id = \(invitationID) AND invitee_id = \(userID) RETURNING 1
            """, logger: logger
        ).first(Int32.self) != nil
    }

    /// The user's pending invitations (to `roomID` only, when given), by id, as their invitee
    /// sees them: the room's name and type, and who invited.
    private func invitations(
        of userID: Int64, roomID: Int64?, after: Int64, limit: Int, on connection: PostgresConnection
    ) async throws -> [Invitation] {
        let rows = try await connection.query(
            """
            SELECT i.id, c.id, coalesce(c.name, ''), c.type, u.id, u.first_name, u.last_name, i.created_at
            FROM messenger.room_invitation i
            JOIN messenger.chat_room c ON c.id = i.chat_room_id AND c.deleted_at IS NULL
            JOIN cloud.user_account u ON u.id = i.inviter_id
            WHERE i.invitee_id = \(userID) AND i.id > \(after) AND (\(roomID)::bigint IS NULL OR i.chat_room_id = \(roomID))
            ORDER BY i.id LIMIT \(limit)
            """, logger: logger)
        var found: [Invitation] = []
        for try await row in rows.decode((Int64, Int64, String, String, Int64, String, String, Date).self) {
            found.append(
                Invitation(
                    id: row.0,
                    room: Invitation.Room(id: row.1, name: row.2, type: RoomView.Kind(rawValue: row.3) ?? .multiparty),
                    inviter: Invitation.Inviter(id: row.4, firstName: row.5, lastName: row.6), createdAt: row.7))
        }
        return found
    }
}
