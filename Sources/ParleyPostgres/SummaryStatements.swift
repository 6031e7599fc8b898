import Foundation
import PostgresNIO

// Asked once per release of busy rooms' summaries (``ParleyCore/NotificationWindows``);
// prepared once per connection, as the pipeline's statements are.

/// The readers of several rooms' chunks, each with their unread counts as the room list
/// counts them, and the room's newest seq.
struct SummaryMembersStatement: ReaderChunksStatement {
    static let name = String(reflecting: Self.self)
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

/// The newest message of each of several rooms (distinct ids), as a new message's event
/// shows it.
///
/// Read from the rooms to their message by `(chat_room_id, seq)`: written as the messages of
/// the rooms whose `seq` is the room's last, the plan read every message of the rooms and
/// every room (a merge join), 38 ms a release for rooms of 67,000 messages and growing with
/// their history, where one index look-up per room takes 0.1 ms.
struct NewestMessagesStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT \(MessageColumns.list(fresh: true))
        FROM unnest($1::bigint[]) AS r(id)
        JOIN messenger.chat_room c ON c.id = r.id
        JOIN messenger.message m ON m.chat_room_id = c.id AND m.seq = c.last_seq
        LEFT JOIN cloud.file f ON f.id = m.file_id
        \(MessageColumns.replyJoin)
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
