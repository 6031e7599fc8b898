import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Users' privacy (`cloud.user_account`), and who may follow whose presence.
public struct PostgresPrivacyRepository: PrivacyRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func privacy(of userID: Int64) async throws -> Privacy {
        let row = try await database.client.query(
            """
            SELECT shares_read_receipts, shares_typing, presence_audience
            FROM cloud.user_account WHERE id = \(userID)
            """, logger: logger
        ).first((Bool, Bool, String).self)
        guard let row else { throw ParleyError.notFound() }
        return Self.privacy(row)
    }

    public func change(_ userID: Int64, _ change: PrivacyChange) async throws -> Privacy {
        try await database.transaction(logger: logger) { connection in
            let old = try await connection.query(
                """
                SELECT shares_read_receipts, shares_typing, presence_audience
                FROM cloud.user_account WHERE id = \(userID) FOR NO KEY UPDATE
                """, logger: logger
            ).first((Bool, Bool, String).self)
            guard let old else { throw ParleyError.notFound() }
            let current = Self.privacy(old)
            let new = current.applying(change)
            guard new != current else { return current }
            try await connection.query(
                """
                UPDATE cloud.user_account
                SET shares_read_receipts = \(new.readReceipts == .everyone), shares_typing = \(new.typing == .on),
                    presence_audience = \(new.presence.rawValue)
                WHERE id = \(userID)
                """, logger: logger)
            try await Outbox.record(
                .privacyChanged(PrivacyChanged(userId: userID, privacy: new)), on: connection, logger: logger)
            return new
        }
    }

    public func maySeePresence(of ownerID: Int64, viewer viewerID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT NOT EXISTS (
                       SELECT 1 FROM messenger.user_block WHERE blocker_id = u.id AND blocked_id = \(viewerID))
                   AND CASE u.presence_audience
                       WHEN 'everyone' THEN true
                       WHEN 'room-mates' THEN EXISTS (
                           SELECT 1 FROM messenger.room_membership a
                           JOIN messenger.room_membership b ON b.chat_room_id = a.chat_room_id
                           WHERE a.user_account_id = u.id AND b.user_account_id = \(viewerID))
                       ELSE false END
            FROM cloud.user_account u WHERE u.id = \(ownerID)
            """, logger: logger
        ).first(Bool.self) ?? false
    }

    private static func privacy(_ row: (Bool, Bool, String)) -> Privacy {
        Privacy(
            readReceipts: row.0 ? .everyone : .nobody, typing: row.1 ? .on : .off,
            presence: Privacy.Presence(rawValue: row.2) ?? .roomMates)
    }
}
