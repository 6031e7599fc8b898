import Foundation
import ParleyCore

/// `{muted, mutedUntil, overrideQuietHours}`; every key is always present.
struct RoomNotificationsResponse: Encodable, Sendable {
    let settings: RoomNotificationSettings

    init(_ settings: RoomNotificationSettings) { self.settings = settings }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let now = Date()
        try container.encode(settings.isMuted(at: now), forKey: .muted)
        // Muted until unmuted has no end time.
        let until = settings.mutedForever || !settings.isMuted(at: now) ? nil : settings.mutedUntil
        try container.encode(until, forKey: .mutedUntil)
        try container.encode(settings.overridesQuietHours, forKey: .overrideQuietHours)
    }

    enum CodingKeys: String, CodingKey { case muted, mutedUntil, overrideQuietHours }
}

/// `muted: true` without `mutedUntil` mutes until unmuted; `overrideQuietHours` defaults to false.
struct RoomNotificationsRequest: Decodable, Sendable {
    let muted: Bool
    let mutedUntil: Date?
    let overrideQuietHours: Bool?

    func settings(now: Date) throws -> RoomNotificationSettings {
        if let mutedUntil {
            guard muted else {
                throw ParleyError.invalidRequest("mutedUntil needs muted: true", field: "mutedUntil")
            }
            guard mutedUntil > now else {
                throw ParleyError.invalidRequest("mutedUntil must be in the future", field: "mutedUntil")
            }
        }
        return RoomNotificationSettings(
            mutedUntil: muted ? (mutedUntil ?? .distantFuture) : nil, overridesQuietHours: overrideQuietHours ?? false)
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
        try container.encode(quietHours?.timeZone.identifier, forKey: .timeZone)
    }

    enum CodingKeys: String, CodingKey { case enabled, start, end, timeZone }
}

struct QuietHoursRequest: Decodable, Sendable {
    let start: String
    let end: String
    let timeZone: String
}
