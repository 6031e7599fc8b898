import Foundation
import ParleyCore
import PostgresNIO

/// The rooms a user can read, newest activity first, with role, read state and peer: the
/// room list and a room's detail.
///
/// Prepared once per connection (see PipelineStatements.swift): planning it over the
/// membership view took several milliseconds, many times its run.
struct RoomViewsStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
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
    typealias Row = PostgresRow
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

    func decodeRow(_ row: PostgresRow) throws -> Row { row }

    /// A row's room and its activity (the list's order), each column decoded as its type: a
    /// tuple of the 23 through PostgresNIO's variadic decode looked up each column's type at
    /// run time, 9 % of `serve`'s CPU under the twenty-room list.
    static func room(_ row: PostgresRow, links: FileLinks) throws -> (room: RoomView, activity: Int64) {
        let cells = row.makeRandomAccess()
        var peer: User?
        if let id = try cells[10].decode(Int64?.self), let email = try cells[11].decode(String?.self),
            let first = try cells[12].decode(String?.self), let last = try cells[13].decode(String?.self),
            let created = try cells[15].decode(Date?.self)
        {
            peer = try UserRecord.user(
                (
                    id, email, first, last, try cells[14].decode(Bool?.self) ?? false, created,
                    try cells[21].decode(String?.self)
                ),
                links: links)
        }
        let lastReadMessageID = try cells[8].decode(Int64?.self)
        let room = RoomView(
            id: try cells[0].decode(Int64.self), uid: try cells[1].decode(String.self),
            type: RoomView.Kind(rawValue: try cells[2].decode(String.self)) ?? .multiparty,
            name: try cells[3].decode(String?.self), description: try cells[19].decode(String?.self),
            archived: try cells[20].decode(Bool.self), createdAt: try cells[4].decode(Date.self),
            lastMessageAt: try cells[5].decode(Date?.self),
            myRole: RoomRole(rank: try cells[7].decode(Int.self)) ?? .reader, lastSeq: try cells[6].decode(Int64.self),
            lastReadMessageId: lastReadMessageID,
            lastReadSeq: lastReadMessageID == nil ? nil : try cells[9].decode(Int64.self),
            unreadCount: try cells[17].decode(Int64.self), unreadMentionCount: try cells[18].decode(Int64.self),
            peer: peer, avatar: try cells[22].decode(String?.self).map { links.object(try FileRecord.decode($0)) })
        return (room, try cells[16].decode(Int64.self))
    }
}
