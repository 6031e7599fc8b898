import Foundation
import PostgresNIO

/// The rooms a user can read, newest activity first, with role, read state and peer: the
/// room list and a room's detail.
///
/// Prepared once per connection (see PipelineStatements.swift): planning it over the
/// membership view took several milliseconds, many times its run.
struct RoomViewsStatement: PostgresPreparedStatement {
    static let sql = """
        WITH mine AS (
            SELECT m.chat_room_id, max(r.rank) AS rank
            FROM messenger.room_membership m JOIN cloud.role r ON r.id = m.role_id
            WHERE m.user_account_id = $1::bigint AND ($2::bigint IS NULL OR m.chat_room_id = $2::bigint)
              AND ($7::bigint[] IS NULL OR m.chat_room_id = ANY($7::bigint[]))
            GROUP BY m.chat_room_id
        )
        SELECT c.id, c.uid, c.type, c.name, c.created_at, c.last_message_at, c.last_seq, mine.rank::integer,
               rm.message_id, coalesce(rm.seq, 0),
               p.id, p.email, p.first_name, p.last_name, p.is_admin, p.created_at,
               \(RoomCursor.activitySQL), \(RoomViewsStatement.unreadCount),
               \(RoomViewsStatement.unreadMentions(of: "$1::bigint")),
               c.description, c.archived_at IS NOT NULL,
               (SELECT \(FileRecord.json) FROM cloud.file f WHERE f.id = p.avatar_file_id),
               (SELECT \(FileRecord.json) FROM cloud.file f WHERE f.id = c.avatar_file_id)
        FROM mine JOIN messenger.chat_room c ON c.id = mine.chat_room_id
        LEFT JOIN messenger.read_marker rm ON rm.chat_room_id = c.id AND rm.user_account_id = $1::bigint
        LEFT JOIN messenger.room_hidden h ON h.chat_room_id = c.id AND h.user_account_id = $1::bigint
        LEFT JOIN cloud.user_account p ON c.type = 'twoparty' AND p.id =
            CASE WHEN c.twoparty_low_user_id = $1::bigint THEN c.twoparty_high_user_id
                 ELSE c.twoparty_low_user_id END
        WHERE ($3::timestamptz IS NULL OR c.updated_at > $3::timestamptz OR c.last_message_at > $3::timestamptz)
          -- The list leaves out what the user hid, until a message arrives after; a room asked
          -- for by id, or found by a search, is always there.
          AND ($2::bigint IS NOT NULL OR $7::bigint[] IS NOT NULL OR h.hidden_at IS NULL
               OR c.last_message_at > h.hidden_at)
          AND ($4::bigint IS NULL OR (\(RoomCursor.activitySQL), c.id) < ($4::bigint, $5::bigint))
        ORDER BY \(RoomCursor.activitySQL) DESC, c.id DESC
        LIMIT $6::bigint
        """
    typealias Row = (
        Int64, String, String, String?, Date, Date?, Int64, Int, Int64?, Int64, Int64?, String?, String?,
        String?, Bool?, Date?, Int64, Int64, Int64, String?, Bool, String?, String?
    )
    /// The `seq` up to which the reader has nothing unread: their marker, or what retention
    /// purged (gone for everyone), whichever is higher.
    static let readThrough = "greatest(coalesce(rm.seq, 0), c.purged_seq)"
    /// Deleted messages after the reader's marker, which the unread count leaves out; looked
    /// for only when the room has deleted any after it.
    static let deletedUnread = """
        CASE WHEN c.last_deleted_seq > coalesce(rm.seq, 0) THEN (
            SELECT count(*) FROM messenger.message d
            WHERE d.chat_room_id = c.id AND d.deleted_at IS NOT NULL AND d.seq > coalesce(rm.seq, 0))
        ELSE 0 END
        """
    /// The reader's unread messages in room `c` with marker `rm`: after what they read
    /// through, not deleted. The room list, the summaries of busy rooms and the pushes' badges
    /// count with it.
    static let unreadCount = "greatest(c.last_seq - \(readThrough) - \(deletedUnread), 0)::bigint"
    /// Mentions of the reader `user` (an SQL expression) after their marker; looked for only
    /// when the room has any after it.
    static func unreadMentions(of user: String) -> String {
        """
        CASE WHEN c.last_mention_seq > coalesce(rm.seq, 0) THEN (
            SELECT count(*) FROM messenger.mention n
            WHERE n.user_account_id = \(user) AND n.chat_room_id = c.id AND n.seq > coalesce(rm.seq, 0))
        ELSE 0 END
        """
    }
    let userID: Int64
    let roomID: Int64?
    let since: Date?
    let cursor: RoomCursor?
    let limit: Int
    /// Only these rooms (a search's); nil: all.
    var only: [Int64]? = nil

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        try bindings.append(userID)
        try bindings.append(roomID)
        try bindings.append(since)
        try bindings.append(cursor?.activity)
        try bindings.append(cursor?.id)
        try bindings.append(Int64(limit))
        try bindings.append(only)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
