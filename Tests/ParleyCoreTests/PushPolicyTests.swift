import Foundation
import ParleyCore
import Testing

struct PushPolicyTests {
    static let prague = TimeZone(identifier: "Europe/Prague")!

    /// A moment given as local time in Prague.
    static func prague(_ hour: Int, _ minute: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = prague
        return calendar.date(from: DateComponents(year: 2026, month: 11, day: 22, hour: hour, minute: minute))!
    }

    @Test func quietHoursWrapPastMidnightInTheUsersTimeZone() throws {
        let night = try QuietHours(start: "22:30", end: "07:00", timeZone: "Europe/Prague")
        #expect(night.contains(Self.prague(23)))
        #expect(night.contains(Self.prague(3)))
        #expect(night.contains(Self.prague(22, 30)))
        #expect(!night.contains(Self.prague(7)))
        #expect(!night.contains(Self.prague(12)))
        #expect(!night.contains(Self.prague(22, 29)))

        let lunch = try QuietHours(start: "12:00", end: "13:00", timeZone: "Europe/Prague")
        #expect(lunch.contains(Self.prague(12, 59)))
        #expect(!lunch.contains(Self.prague(13)))
        // 12:30 in Prague is 20:30 in Tokyo: the zone decides, not the server's.
        let tokyoLunch = try QuietHours(start: "12:00", end: "13:00", timeZone: "Asia/Tokyo")
        #expect(!tokyoLunch.contains(Self.prague(12, 30)))
    }

    @Test func quietHoursRejectBadTimesAndZones() {
        #expect(throws: ParleyError.self) { try QuietHours(start: "24:00", end: "07:00", timeZone: "UTC") }
        #expect(throws: ParleyError.self) { try QuietHours(start: "7:00", end: "08:00", timeZone: "UTC") }
        #expect(throws: ParleyError.self) { try QuietHours(start: "07:00", end: "07:00", timeZone: "UTC") }
        #expect(throws: ParleyError.self) { try QuietHours(start: "07:00", end: "08:00", timeZone: "Nowhere/Town") }
    }

    @Test func mutedRoomsAndQuietHoursStopPushesUnlessTheRoomPassesThem() throws {
        let policy = PushPolicy()
        let night = try QuietHours(start: "22:00", end: "07:00", timeZone: "Europe/Prague")
        let midnight = Self.prague(0)
        let noon = Self.prague(12)
        #expect(policy.allows(room: RoomNotificationSettings(), quietHours: nil, at: midnight))
        #expect(!policy.allows(room: RoomNotificationSettings(), quietHours: night, at: midnight))
        #expect(policy.allows(room: RoomNotificationSettings(), quietHours: night, at: noon))
        #expect(
            policy.allows(room: RoomNotificationSettings(overridesQuietHours: true), quietHours: night, at: midnight))
        let forever = RoomNotificationSettings(mutedUntil: .distantFuture, overridesQuietHours: true)
        #expect(!policy.allows(room: forever, quietHours: nil, at: noon))
        let untilOne = RoomNotificationSettings(mutedUntil: Self.prague(13))
        #expect(!policy.allows(room: untilOne, quietHours: nil, at: noon))
        #expect(policy.allows(room: untilOne, quietHours: nil, at: Self.prague(13, 1)))
    }

    static func recipient(_ user: Int64, device: Int64, room: RoomNotificationSettings = .init()) -> PushRecipient {
        PushRecipient(
            userID: user, deviceID: device, provider: .apns, token: "t\(device)", room: room, quietHours: nil,
            unread: Int(user))
    }

    @Test func theComposerSkipsTheActorAndMutedMembersAndWritesThePreview() {
        let intent = PushIntent(reason: .message, actorID: 1, messageID: 10, seq: 4, content: "line one\nline two")
        let context = PushRoomContext(roomUID: "uid", roomName: "Team", twoParty: false, actorName: "Ada Lovelace")
        let recipients = [
            Self.recipient(1, device: 100), Self.recipient(2, device: 200), Self.recipient(2, device: 201),
            Self.recipient(3, device: 300, room: RoomNotificationSettings(mutedUntil: .distantFuture)),
        ]
        let jobs = PushComposer().jobs(for: intent, roomID: 9, context: context, recipients: recipients, at: Date())
        #expect(jobs.map(\.deviceID) == [200, 201])
        #expect(jobs[0].notification.title == "Team")
        #expect(jobs[0].notification.body == "Ada Lovelace: line one line two")
        #expect(jobs[0].notification.badge == 2)
        #expect(jobs[0].notification.data["messageId"] == "10")

        let direct = PushRoomContext(roomUID: "uid", roomName: nil, twoParty: true, actorName: "Ada Lovelace")
        let long = PushIntent(reason: .message, actorID: 1, content: String(repeating: "x", count: 500))
        let short = PushComposer(previewLength: 20).jobs(
            for: long, roomID: 9, context: direct, recipients: [Self.recipient(2, device: 200)], at: Date())
        #expect(short[0].notification.title == "Ada Lovelace")
        #expect(short[0].notification.body == String(repeating: "x", count: 19) + "…")

        let bare = PushComposer(content: .ids).jobs(
            for: intent, roomID: 9, context: context, recipients: [Self.recipient(2, device: 200)], at: Date())
        #expect(bare[0].notification.title == nil && bare[0].notification.body == nil)
    }

    @Test func aNoticeOfTheAppsServerIsTheRoomsWithoutASender() {
        let context = PushRoomContext(roomUID: "uid", roomName: "Team", twoParty: false, actorName: nil)
        let jobs = PushComposer().jobs(
            for: PushIntent(reason: .message, actorID: 0, content: "The build is green."), roomID: 9, context: context,
            recipients: [Self.recipient(2, device: 200)], at: Date())
        #expect(jobs[0].notification.title == "Team" && jobs[0].notification.body == "The build is green.")
    }

    @Test func beingAddedNamesTheRoomAndWhoAdded() {
        let context = PushRoomContext(roomUID: "uid", roomName: "Team", twoParty: false, actorName: "Ada Lovelace")
        let jobs = PushComposer().jobs(
            for: PushIntent(reason: .added, actorID: 1), roomID: 9, context: context,
            recipients: [Self.recipient(2, device: 200)], at: Date())
        #expect(jobs[0].notification.body == "Ada Lovelace added you to “Team”")
        #expect(jobs[0].notification.data["type"] == "added")

        let byAdministrator = PushComposer().jobs(
            for: PushIntent(reason: .added, actorID: 0), roomID: 9, context: context,
            recipients: [Self.recipient(2, device: 200)], at: Date())
        #expect(byAdministrator[0].notification.body == "You were added to “Team”")
    }
}
