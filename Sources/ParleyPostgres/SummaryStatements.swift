import Foundation
import PostgresNIO

// Asked once per release of busy rooms' summaries (``ParleyCore/NotificationWindows``);
// prepared once per connection, as the pipeline's statements are.

/// The readers of several rooms' chunks, each with their unread counts as the room list
/// counts them, and the room's newest seq.
struct SummaryMembersStatement: ReaderChunksStatement {
    static let sql = """
        SELECT r.room, r.after, u.user_account_id, c.last_seq, \(RoomViewsStatement.unreadCount),
               \(RoomViewsStatement.unreadMentions(of: "u.user_account_id"))
        FROM unnest($1::bigint[], $2::bigint[]) AS r(room, after)
        JOIN messenger.chat_room c ON c.id = r.room
        CROSS JOIN LATERAL \(ReaderIDsStatement.chunkReaders) u
        LEFT JOIN messenger.read_marker rm ON rm.chat_room_id = c.id AND rm.user_account_id = u.user_account_id
        ORDER BY r.room, r.after, u.user_account_id
        """
    typealias Row = (Int64, Int64, Int64, Int64, Int64, Int64)
    let rooms: [Int64]
    let after: [Int64]
    let limit: Int32

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The newest message of each of several rooms, as a new message's event shows it.
struct NewestMessagesStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT \(MessageColumns.list(fresh: true))
        FROM \(MessageColumns.source)
        WHERE m.chat_room_id = ANY($1::bigint[]) AND m.seq = c.last_seq
        """
    typealias Row = PostgresRow
    let rooms: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        try bindings.append(rooms)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}
