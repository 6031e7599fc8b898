import Foundation
import ParleyCore

/// `{level, muted, mutedUntil, overrideQuietHours}`; every key is always present. `level` is
/// the member's chosen level; a mute holds it at `none` until `mutedUntil`.
struct RoomNotificationsResponse: Encodable, Sendable {
    let settings: RoomNotificationSettings

    init(_ settings: RoomNotificationSettings) { self.settings = settings }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let now = Date()
        try container.encode(settings.level, forKey: .level)
        try container.encode(settings.isMuted(at: now), forKey: .muted)
        // Muted until unmuted has no end time.
        let until = settings.mutedForever || !settings.isMuted(at: now) ? nil : settings.mutedUntil
        try container.encode(until, forKey: .mutedUntil)
        try container.encode(settings.overridesQuietHours, forKey: .overrideQuietHours)
    }

    enum CodingKeys: String, CodingKey { case level, muted, mutedUntil, overrideQuietHours }
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
    let quietHours: QuietHours?

    init(_ quietHours: QuietHours?) { self.quietHours = quietHours }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(quietHours != nil, forKey: .enabled)
        try container.encode(quietHours.map { QuietHours.text($0.start) }, forKey: .start)
        try container.encode(quietHours.map { QuietHours.text($0.end) }, forKey: .end)
        try container.encode(quietHours?.timeZoneName, forKey: .timeZone)
    }

    enum CodingKeys: String, CodingKey { case enabled, start, end, timeZone }
}

struct QuietHoursRequest: Decodable, Sendable {
    let start: String
    let end: String
    let timeZone: String
}
