import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Delivery receipts (`messenger.delivery_marker`) beside the read markers.
public struct PostgresReceiptRepository: ReceiptRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// One statement moves them all; each that went beyond the member's read marker is told.
    public func recordDelivered(_ marks: [(member: RoomUser, seq: Int64)]) async throws {
        guard !marks.isEmpty else { return }
        try await database.transaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                WITH asked AS (
                    SELECT a.room, a.member, least(a.seq, r.last_seq) AS seq
                    FROM unnest(\(marks.map(\.member.roomID)), \(marks.map(\.member.userID)), \(marks.map(\.seq)))
                         AS a(room, member, seq)
                    JOIN messenger.chat_room r ON r.id = a.room
                    WHERE EXISTS (
                        SELECT 1 FROM messenger.room_membership m
                        WHERE m.chat_room_id = a.room AND m.user_account_id = a.member)
                ), moved AS (
                    INSERT INTO messenger.delivery_marker AS d (chat_room_id, user_account_id, seq)
                    SELECT room, member, seq FROM asked WHERE seq > 0
                    ORDER BY room, member
                    ON CONFLICT (chat_room_id, user_account_id) DO UPDATE
                    SET seq = EXCLUDED.seq, updated_at = clock_timestamp()
                    WHERE d.seq < EXCLUDED.seq
                    RETURNING chat_room_id, user_account_id, seq
                )
                SELECT moved.chat_room_id, moved.user_account_id, moved.seq,
                       CASE WHEN u.shares_read_receipts THEN coalesce(rm.seq, 0) END
                FROM moved JOIN cloud.user_account u ON u.id = moved.user_account_id
                LEFT JOIN messenger.read_marker rm
                  ON rm.chat_room_id = moved.chat_room_id AND rm.user_account_id = moved.user_account_id
                WHERE moved.seq > coalesce(rm.seq, 0)
                ORDER BY moved.chat_room_id, moved.user_account_id
                """, logger: logger
            ).all((Int64, Int64, Int64, Int64?).self)
            let events = rows.map { room, member, delivered, read in
                DomainEvent.receiptChanged(
                    RoomEvent.ReceiptChanged(chatRoomId: room, userId: member, readSeq: read, deliveredSeq: delivered))
            }
            if !events.isEmpty { try await Outbox.record(events, on: connection, logger: logger) }
        }
    }

    public func receipts(roomID: Int64, viewer viewerID: Int64, afterUserID: Int64?, limit: Int) async throws
        -> [Receipt]
    {
        try await database.client.query(
            """
            SELECT m.member,
                   CASE WHEN u.shares_read_receipts OR m.member = \(viewerID) THEN coalesce(r.seq, 0) END,
                   greatest(coalesce(d.seq, 0), coalesce(r.seq, 0)), greatest(r.updated_at, d.updated_at)
            FROM (SELECT DISTINCT user_account_id AS member FROM messenger.room_membership
                  WHERE chat_room_id = \(roomID) AND user_account_id > \(afterUserID ?? 0)) m
            JOIN cloud.user_account u ON u.id = m.member
            LEFT JOIN messenger.read_marker r ON r.chat_room_id = \(roomID) AND r.user_account_id = m.member
            LEFT JOIN messenger.delivery_marker d ON d.chat_room_id = \(roomID) AND d.user_account_id = m.member
            ORDER BY m.member LIMIT \(limit)
            """, logger: logger
        ).all((Int64, Int64?, Int64, Date?).self).map {
            Receipt(userId: $0.0, readSeq: $0.1, deliveredSeq: $0.2, updatedAt: $0.3)
        }
    }
}
