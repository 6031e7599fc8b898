import Foundation
import PostgresNIO

// Asked once per fan-out chunk; prepared once per connection (see PipelineStatements.swift):
// planning the unread counts over the membership view dominated the fan-out's database time.

/// Devices, preferences and badge counts of a fan-out chunk's members.
struct PushRecipientsStatement: PostgresPreparedStatement {
    static let sql = """
        WITH unread AS (
            SELECT m.user_account_id, sum(greatest(c.last_seq - coalesce(rm.seq, 0), 0))::bigint AS count
            FROM (SELECT DISTINCT chat_room_id, user_account_id FROM messenger.room_membership
                  WHERE user_account_id IN (SELECT user_account_id FROM notifications.user_push_token
                                            WHERE user_account_id = ANY($2::bigint[]))) m
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            LEFT JOIN messenger.read_marker rm
                   ON rm.chat_room_id = m.chat_room_id AND rm.user_account_id = m.user_account_id
            GROUP BY m.user_account_id
        )
        SELECT p.user_account_id, p.device_id, p.provider, p.token,
               coalesce(s.muted_until = 'infinity', false),
               CASE WHEN s.muted_until = 'infinity' THEN NULL ELSE s.muted_until END,
               coalesce(s.override_quiet_hours, false),
               q.start_minute, q.end_minute, q.time_zone, coalesce(u.count, 0)
        FROM notifications.user_push_token p
        LEFT JOIN messenger.room_notification_setting s
               ON s.chat_room_id = $1::bigint AND s.user_account_id = p.user_account_id
        LEFT JOIN notifications.quiet_hours q ON q.user_account_id = p.user_account_id
        LEFT JOIN unread u ON u.user_account_id = p.user_account_id
        WHERE p.user_account_id = ANY($2::bigint[])
        ORDER BY p.user_account_id, p.device_id
        """
    typealias Row = (Int64, Int64, String, String, Bool, Date?, Bool, Int16?, Int16?, String?, Int64)
    let roomID: Int64
    let userIDs: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(roomID)
        try bindings.append(userIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// What a push says about its room and sender.
struct PushContextStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT c.uid, c.name, c.type = 'twoparty',
               (SELECT trim(first_name || ' ' || last_name) FROM cloud.user_account WHERE id = $2::bigint)
        FROM messenger.chat_room c WHERE c.id = $1::bigint
        """
    typealias Row = (String, String?, Bool, String?)
    let roomID: Int64
    let actorID: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(roomID)
        try bindings.append(actorID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
