import Foundation

/// Which of a room's new messages push a member.
public enum NotificationLevel: String, Sendable, Codable, CaseIterable {
    case all
    /// Only messages that mention the member.
    case mentions
    case none
}

/// A member's notification settings for one room.
public struct RoomNotificationSettings: Sendable, Equatable {
    public var level: NotificationLevel
    /// `nil`: not muted; `.distantFuture`: muted until unmuted. A mute means level `none`
    /// until it ends.
    public var mutedUntil: Date?
    /// Pushes of this room pass the member's quiet hours.
    public var overridesQuietHours: Bool

    public init(level: NotificationLevel = .all, mutedUntil: Date? = nil, overridesQuietHours: Bool = false) {
        self.level = level
        self.mutedUntil = mutedUntil
        self.overridesQuietHours = overridesQuietHours
    }

    public var mutedForever: Bool { mutedUntil == .distantFuture }

    public func isMuted(at now: Date) -> Bool { mutedUntil.map { $0 > now } ?? false }
}

/// A daily period without pushes, in the user's time zone (may wrap past midnight).
public struct QuietHours: Sendable, Equatable {
    /// Minutes after local midnight.
    public let start: Int
    public let end: Int
    public let timeZone: TimeZone
    /// The name the user gave (`UTC` stays `UTC`, where Foundation's identifier says `GMT`).
    public let timeZoneName: String

    public init(start: Int, end: Int, timeZone: TimeZone, named name: String? = nil) throws {
        guard (0..<1440).contains(start), (0..<1440).contains(end) else {
            throw ParleyError.invalidRequest("quiet hours are times of day", field: "start")
        }
        guard start != end else {
            throw ParleyError.invalidRequest("quiet hours must start and end at different times", field: "end")
        }
        self.start = start
        self.end = end
        self.timeZone = timeZone
        self.timeZoneName = name ?? timeZone.identifier
    }

    /// Parses `HH:MM` times and an IANA time zone name, naming the failing field.
    public init(start: String, end: String, timeZone: String) throws {
        guard let zone = TimeZone(identifier: timeZone), timeZone.count <= 64 else {
            throw ParleyError.invalidRequest(
                "timeZone must be an IANA time zone such as Europe/Prague", field: "timeZone")
        }
        try self.init(
            start: try Self.minutes(start, field: "start"), end: try Self.minutes(end, field: "end"), timeZone: zone,
            named: timeZone)
    }

    public func contains(_ date: Date) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        return start < end ? (start..<end).contains(minute) : (minute >= start || minute < end)
    }

    public static func text(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    static func minutes(_ text: String, field: String) throws -> Int {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]),
            let minute = Int(parts[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { throw ParleyError.invalidRequest("\(field) must be a time of day as HH:MM", field: field) }
        return hour * 60 + minute
    }
}

/// Whether a recipient gets a push now: not for a muted room or one at level `none`, at level
/// `mentions` only when mentioned, not inside quiet hours unless the room passes them.
public struct PushPolicy: Sendable {
    public init() {}

    public func allows(room: RoomNotificationSettings, quietHours: QuietHours?, at now: Date, mentioned: Bool = false)
        -> Bool
    {
        if room.isMuted(at: now) { return false }
        switch room.level {
        case .all: break
        case .mentions: if !mentioned { return false }
        case .none: return false
        }
        if let quietHours, !room.overridesQuietHours, quietHours.contains(now) { return false }
        return true
    }
}
