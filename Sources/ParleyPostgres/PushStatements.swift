import Foundation
import PostgresNIO

// Asked once per fan-out batch; prepared once per connection (see PipelineStatements.swift):
// planning the unread counts over the membership view dominated the fan-out's database time.

/// Devices, preferences for the room and badge counts of the users of several rooms at once
/// (pairs of `rooms[i]` and `users[i]`).
struct PushRecipientsStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        WITH wanted AS (
            SELECT DISTINCT room, user_id FROM unnest($1::bigint[], $2::bigint[]) AS w(room, user_id)
        ), unread AS (
            SELECT m.user_account_id,
                   sum(\(RoomViewsStatement.unreadCount))::bigint AS count
            FROM (SELECT DISTINCT chat_room_id, user_account_id FROM messenger.room_membership
                  WHERE user_account_id IN (SELECT p.user_account_id FROM notifications.user_push_token p
                                            WHERE p.user_account_id IN (SELECT user_id FROM wanted))) m
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            LEFT JOIN messenger.read_marker rm
                   ON rm.chat_room_id = m.chat_room_id AND rm.user_account_id = m.user_account_id
            GROUP BY m.user_account_id
        )
        SELECT w.room, p.user_account_id, p.device_id, p.provider, p.token,
               coalesce(s.muted_until = 'infinity', false),
               CASE WHEN s.muted_until = 'infinity' THEN NULL ELSE s.muted_until END,
               coalesce(s.override_quiet_hours, false),
               q.start_minute, q.end_minute, q.time_zone, coalesce(u.count, 0), coalesce(s.level, 'all')
        FROM wanted w
        JOIN notifications.user_push_token p ON p.user_account_id = w.user_id
        LEFT JOIN messenger.room_notification_setting s
               ON s.chat_room_id = w.room AND s.user_account_id = w.user_id
        LEFT JOIN notifications.quiet_hours q ON q.user_account_id = w.user_id
        LEFT JOIN unread u ON u.user_account_id = w.user_id
        ORDER BY w.room, p.user_account_id, p.device_id
        """
    typealias Row = (Int64, Int64, Int64, String, String, Bool, Date?, Bool, Int16?, Int16?, String?, Int64, String)
    let rooms: [Int64]
    let users: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(rooms)
        try bindings.append(users)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// What pushes say about rooms and their actors (pairs of `rooms[i]` and `actors[i]`).
struct PushContextStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT r.room, r.actor, c.uid, c.name, c.type = 'twoparty',
               (SELECT trim(first_name || ' ' || last_name) FROM cloud.user_account WHERE id = r.actor)
        FROM unnest($1::bigint[], $2::bigint[]) AS r(room, actor)
        JOIN messenger.chat_room c ON c.id = r.room
        """
    typealias Row = (Int64, Int64, String, String?, Bool, String?)
    let rooms: [Int64]
    let actors: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(rooms)
        try bindings.append(actors)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
