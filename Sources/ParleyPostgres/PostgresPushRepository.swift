import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Push recipients for the fan-out, dead-token removal, and the notification preferences
/// behind the REST routes.
public struct PostgresPushRepository: PushAudience, PushTokenStore, NotificationSettingsRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func recipients(in rooms: [Int64: Set<Int64>]) async throws -> [Int64: [PushRecipient]] {
        let pairs = rooms.flatMap { room, users in users.map { (room, $0) } }
        guard !pairs.isEmpty else { return [:] }
        // The badge counts unread messages over every room each user reads (by any path).
        let rows = try await database.client.execute(
            PushRecipientsStatement(rooms: pairs.map { $0.0 }, users: pairs.map { $0.1 }), logger: logger)
        var recipients: [Int64: [PushRecipient]] = [:]
        for try await row in rows {
            guard let provider = PushProvider(rawValue: row.3) else { continue }
            recipients[row.0, default: []].append(
                PushRecipient(
                    userID: row.1, deviceID: row.2, provider: provider, token: row.4,
                    room: RoomNotificationSettings(
                        level: NotificationLevel(rawValue: row.12) ?? .all, mutedUntil: row.5 ? .distantFuture : row.6,
                        overridesQuietHours: row.7),
                    quietHours: Self.quietHours(start: row.8, end: row.9, timeZone: row.10), unread: Int(row.11)))
        }
        return recipients
    }

    public func contexts(of rooms: Set<RoomUser>) async throws -> [RoomUser: PushRoomContext] {
        guard !rooms.isEmpty else { return [:] }
        let rooms = Array(rooms)
        let rows = try await database.client.execute(
            PushContextStatement(rooms: rooms.map(\.roomID), actors: rooms.map(\.userID)), logger: logger)
        var contexts: [RoomUser: PushRoomContext] = [:]
        for try await (room, actor, uid, name, twoParty, actorName) in rows {
            contexts[RoomUser(roomID: room, userID: actor)] = PushRoomContext(
                roomUID: uid, roomName: name, twoParty: twoParty, actorName: actorName)
        }
        return contexts
    }

    public func blocks(among pairs: Set<UserBlock>) async throws -> Set<UserBlock> {
        guard !pairs.isEmpty else { return [] }
        let pairs = Array(pairs)
        let rows = try await database.client.query(
            """
            SELECT b.blocker_id, b.blocked_id FROM messenger.user_block b
            JOIN unnest(\(pairs.map(\.blockerID))::bigint[], \(pairs.map(\.blockedID))::bigint[]) AS p(blocker, blocked)
              ON b.blocker_id = p.blocker AND b.blocked_id = p.blocked
            """, logger: logger)
        var found = Set<UserBlock>()
        for try await (blocker, blocked) in rows.decode((Int64, Int64).self) {
            found.insert(UserBlock(blockerID: blocker, blockedID: blocked))
        }
        return found
    }

    public func removeToken(deviceID: Int64, token: String) async throws {
        try await database.client.query(
            "DELETE FROM notifications.user_push_token WHERE device_id = \(deviceID) AND token = \(token)",
            logger: logger)
    }

    public func roomSettings(roomID: Int64, userID: Int64) async throws -> RoomNotificationSettings {
        let row = try await database.client.query(
            """
            SELECT muted_until = 'infinity', CASE WHEN muted_until = 'infinity' THEN NULL ELSE muted_until END,
                   override_quiet_hours, level
            FROM messenger.room_notification_setting
            WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
            """, logger: logger
        ).first((Bool?, Date?, Bool, String).self)
        guard let row else { return RoomNotificationSettings() }
        return RoomNotificationSettings(
            level: NotificationLevel(rawValue: row.3) ?? .all, mutedUntil: row.0 == true ? .distantFuture : row.1,
            overridesQuietHours: row.2)
    }

    public func setRoomSettings(_ settings: RoomNotificationSettings, roomID: Int64, userID: Int64) async throws {
        let forever = settings.mutedForever
        let until = forever ? nil : settings.mutedUntil
        try await database.client.query(
            """
            INSERT INTO messenger.room_notification_setting
                (chat_room_id, user_account_id, muted_until, override_quiet_hours, level)
            VALUES (\(roomID), \(userID),
                    CASE WHEN \(forever) THEN 'infinity'::timestamptz ELSE \(until)::timestamptz END,
                    \(settings.overridesQuietHours), \(settings.level.rawValue))
            ON CONFLICT (chat_room_id, user_account_id) DO UPDATE
            SET muted_until = excluded.muted_until, override_quiet_hours = excluded.override_quiet_hours,
                level = excluded.level, updated_at = now()
            """, logger: logger)
    }

    public func quietHours(userID: Int64) async throws -> QuietHours? {
        let row = try await database.client.query(
            """
            SELECT start_minute, end_minute, time_zone FROM notifications.quiet_hours
            WHERE user_account_id = \(userID)
            """, logger: logger
        ).first((Int16, Int16, String).self)
        return row.flatMap { Self.quietHours(start: $0.0, end: $0.1, timeZone: $0.2) }
    }

    public func setQuietHours(_ quietHours: QuietHours?, userID: Int64) async throws {
        guard let quietHours else {
            try await database.client.query(
                "DELETE FROM notifications.quiet_hours WHERE user_account_id = \(userID)", logger: logger)
            return
        }
        try await database.client.query(
            """
            INSERT INTO notifications.quiet_hours (user_account_id, start_minute, end_minute, time_zone)
            VALUES (\(userID), \(Int16(quietHours.start)), \(Int16(quietHours.end)), \(quietHours.timeZoneName))
            ON CONFLICT (user_account_id) DO UPDATE
            SET start_minute = excluded.start_minute, end_minute = excluded.end_minute,
                time_zone = excluded.time_zone, updated_at = now()
            """, logger: logger)
    }

    /// Stored quiet hours; a time zone this system no longer knows counts as none.
    static func quietHours(start: Int16?, end: Int16?, timeZone: String?) -> QuietHours? {
        guard let start, let end, let timeZone, let zone = TimeZone(identifier: timeZone) else { return nil }
        return try? QuietHours(start: Int(start), end: Int(end), timeZone: zone, named: timeZone)
    }
}
