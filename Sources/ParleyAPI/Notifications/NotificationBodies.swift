import Foundation
import ParleyCore

/// `{level, muted, mutedUntil, overrideQuietHours}`; every key is always present. `level` is
/// the member's chosen level; a mute holds it at `none` until `mutedUntil`.
struct RoomNotificationsResponse: Encodable, Sendable {
    let level: NotificationLevel
    let muted: Bool
    @NullEncoded var mutedUntil: Date?
    let overrideQuietHours: Bool

    init(_ settings: RoomNotificationSettings, now: Date = Date()) {
        level = settings.level
        muted = settings.isMuted(at: now)
        // Muted until unmuted has no end time.
        mutedUntil = settings.mutedForever || !muted ? nil : settings.mutedUntil
        overrideQuietHours = settings.overridesQuietHours
    }
}

/// Replaces the settings: `level` defaults to `all`; `muted: true` without `mutedUntil` mutes
/// until unmuted; `overrideQuietHours` defaults to false.
struct RoomNotificationsRequest: Decodable, Sendable {
    let level: String?
    let muted: Bool?
    let mutedUntil: Date?
    let overrideQuietHours: Bool?

    func settings(now: Date) throws -> RoomNotificationSettings {
        let level = try level.map { text in
            guard let level = NotificationLevel(rawValue: text) else {
                throw ParleyError.invalidRequest("level must be all, mentions or none", field: "level")
            }
            return level
        }
        guard level != nil || muted != nil else {
            throw ParleyError.invalidRequest("give level, muted, or both", field: "level")
        }
        let muted = muted ?? false
        if let mutedUntil {
            guard muted else {
                throw ParleyError.invalidRequest("mutedUntil needs muted: true", field: "mutedUntil")
            }
            guard mutedUntil > now else {
                throw ParleyError.invalidRequest("mutedUntil must be in the future", field: "mutedUntil")
            }
        }
        return RoomNotificationSettings(
            level: level ?? .all, mutedUntil: muted ? (mutedUntil ?? .distantFuture) : nil,
            overridesQuietHours: overrideQuietHours ?? false)
    }
}

/// `{enabled, start, end, timeZone}`; times as `HH:MM`, all null when quiet hours are off.
struct QuietHoursResponse: Encodable, Sendable {
    let enabled: Bool
    @NullEncoded var start: String?
    @NullEncoded var end: String?
    @NullEncoded var timeZone: String?

    init(_ quietHours: QuietHours?) {
        enabled = quietHours != nil
        start = quietHours.map { QuietHours.text($0.start) }
        end = quietHours.map { QuietHours.text($0.end) }
        timeZone = quietHours?.timeZoneName
    }
}

struct QuietHoursRequest: Decodable, Sendable {
    let start: String
    let end: String
    let timeZone: String
}
