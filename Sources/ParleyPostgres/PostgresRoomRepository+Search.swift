import Foundation
import ParleyCore
import PostgresNIO

/// Search through `messenger.message_search_idx` (see migration 0018): the query's terms
/// become a tsquery in PostgreSQL (`messenger.search_query`), never SQL or query syntax, and
/// the rooms the user reads, an array, are the index's first column's condition.
extension PostgresRoomRepository: SearchRepository {
    /// The expression the index is built on; a query must repeat it exactly to use it.
    static let searchVector = "to_tsvector('simple'::regconfig, messenger.search_text(m.content))"

    public func searchMessages(terms: [String], userID: Int64, roomID: Int64?, before: Int64?, limit: Int)
        async throws -> [SearchHit]
    {
        let rows = try await database.reads.query(
            """
            SELECT \(unescaped: MessageColumns.list()), c.name, c.type
            FROM \(unescaped: MessageColumns.source)
            WHERE m.chat_room_id = ANY(ARRAY(
                      SELECT DISTINCT chat_room_id FROM messenger.room_membership
                      WHERE user_account_id = \(userID) AND (\(roomID)::bigint IS NULL OR chat_room_id = \(roomID))))
              AND m.deleted_at IS NULL
              AND \(unescaped: Self.searchVector) @@ messenger.search_query(\(terms))
              AND m.id < \(before ?? Int64.max)
            ORDER BY m.id DESC LIMIT \(limit)
            """, logger: logger
        )
        let messages = try await self.messages(from: rows, viewer: userID)
        return try zip(messages, rows).map { message, row in
            let cells = row.makeRandomAccess()
            return SearchHit(
                message: message,
                room: RoomSummary(
                    id: message.chatRoomId, uid: message.chatRoomUid,
                    name: try cells[MessageColumns.count].decode(String?.self),
                    type: RoomView.Kind(rawValue: try cells[MessageColumns.count + 1].decode(String.self))
                        ?? .multiparty))
        }
    }

    public func searchRooms(terms: [String], userID: Int64, page: RoomPage) async throws -> (
        rooms: [RoomView], nextCursor: String?
    ) {
        // A user's rooms are few enough to match without an index.
        let matching = try await database.reads.query(
            """
            SELECT c.id
            FROM (SELECT DISTINCT chat_room_id FROM messenger.room_membership WHERE user_account_id = \(userID)) r
            JOIN messenger.chat_room c ON c.id = r.chat_room_id
            LEFT JOIN cloud.user_account p ON c.type = 'twoparty' AND p.id =
                CASE WHEN c.twoparty_low_user_id = \(userID) THEN c.twoparty_high_user_id
                     ELSE c.twoparty_low_user_id END
            WHERE to_tsvector('simple'::regconfig, messenger.search_text(
                    concat_ws(' ', c.name, p.first_name, p.last_name)))
                  @@ messenger.search_query(\(terms))
            """, logger: logger
        ).all(Int64.self)
        guard !matching.isEmpty else { return ([], nil) }
        return try await rooms(for: userID, page: page, only: matching)
    }
}
