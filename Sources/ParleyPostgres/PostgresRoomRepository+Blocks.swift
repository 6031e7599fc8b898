import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// The rule of blocks in SQL, in one place: a sender may not write in a two-party room whose
/// other user blocked them.
enum BlockRule {
    /// True when the sender (expression `sender`) is blocked in the room whose id is `room`.
    static func blockedSender(room: String, sender: String) -> String {
        "EXISTS (SELECT 1 FROM messenger.chat_room bc WHERE bc.id = \(room) AND \(blockedIn(room: "bc", sender: sender)))"
    }

    /// The same for a `messenger.chat_room` row already at hand (its alias `room`).
    static func blockedIn(room: String, sender: String) -> String {
        """
        (\(room).type = 'twoparty' AND EXISTS (
            SELECT 1 FROM messenger.user_block b
            WHERE b.blocked_id = \(sender) AND b.blocker_id IN (\(room).twoparty_low_user_id, \(room).twoparty_high_user_id)))
        """
    }
}

/// Blocks (`messenger.user_block`), and what they refuse in rooms.
extension PostgresRoomRepository: BlockRepository {
    public func block(_ blockedID: Int64, by blockerID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            let added = try await connection.query(
                """
                INSERT INTO messenger.user_block (blocker_id, blocked_id)
                SELECT \(blockerID), id FROM cloud.user_account WHERE id = \(blockedID)
                ON CONFLICT DO NOTHING
                RETURNING 1
                """, logger: logger
            ).first(Int32.self)
            if added == nil {
                let exists = try await connection.query(
                    "SELECT 1 FROM cloud.user_account WHERE id = \(blockedID)", logger: logger
                ).first(Int32.self)
                guard exists != nil else { throw ParleyError.notFound("No such user.") }
                return
            }
            // A block withdraws the invitations between the two, either way.
            try await connection.query(
                """
                DELETE FROM messenger.room_invitation
                WHERE (invitee_id = \(blockedID) AND inviter_id = \(blockerID))
                   OR (invitee_id = \(blockerID) AND inviter_id = \(blockedID))
                """, logger: logger)
            try await Outbox.record(
                .userBlocked(Blocking(blockerId: blockerID, blockedId: blockedID)), on: connection, logger: logger)
        }
    }

    public func unblock(_ blockedID: Int64, by blockerID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            let removed = try await connection.query(
                """
                DELETE FROM messenger.user_block WHERE blocker_id = \(blockerID) AND blocked_id = \(blockedID)
                RETURNING 1
                """, logger: logger
            ).first(Int32.self)
            guard removed != nil else { return }
            try await Outbox.record(
                .userUnblocked(Blocking(blockerId: blockerID, blockedId: blockedID)), on: connection, logger: logger)
        }
    }

    public func blocked(by blockerID: Int64, after: Int64?, limit: Int) async throws -> [User] {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: UserRecord.columns("u"))
            FROM messenger.user_block b JOIN cloud.user_account u ON u.id = b.blocked_id
            WHERE b.blocker_id = \(blockerID) AND b.blocked_id > \(after ?? 0)
            ORDER BY b.blocked_id LIMIT \(limit)
            """, logger: logger)
        var users: [User] = []
        for try await row in rows.decode(UserRecord.Row.self) {
            users.append(try UserRecord.user(row, links: fileLinks))
        }
        return users
    }

    public func isBlocked(_ userID: Int64, by blockerID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT 1 FROM messenger.user_block WHERE blocker_id = \(blockerID) AND blocked_id = \(userID)
            """, logger: logger
        ).first(Int32.self) != nil
    }

    public func sendRefusals(_ members: Set<RoomUser>) async throws -> [RoomUser: SendRefusal] {
        let members = Array(members)
        let rows = try await database.client.query(
            """
            SELECT p.room_id, p.user_id, c.archived_at IS NOT NULL
            FROM unnest(\(members.map(\.roomID))::bigint[], \(members.map(\.userID))::bigint[]) AS p(room_id, user_id)
            JOIN messenger.chat_room c ON c.id = p.room_id
            WHERE c.archived_at IS NOT NULL
               OR \(unescaped: BlockRule.blockedSender(room: "p.room_id", sender: "p.user_id"))
            """, logger: logger)
        var refusals: [RoomUser: SendRefusal] = [:]
        for try await (roomID, userID, archived) in rows.decode((Int64, Int64, Bool).self) {
            refusals[RoomUser(roomID: roomID, userID: userID)] = archived ? .archived : .blocked
        }
        return refusals
    }
}
