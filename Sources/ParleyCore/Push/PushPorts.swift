import Foundation

/// One device that may be pushed, with what the fan-out needs to decide and compose.
public struct PushRecipient: Sendable, Equatable {
    public let userID: Int64
    public let deviceID: Int64
    public let provider: PushProvider
    public let token: String
    public let room: RoomNotificationSettings
    public let quietHours: QuietHours?
    /// Unread messages over all the user's rooms.
    public let unread: Int

    public init(
        userID: Int64, deviceID: Int64, provider: PushProvider, token: String, room: RoomNotificationSettings,
        quietHours: QuietHours?, unread: Int
    ) {
        self.userID = userID
        self.deviceID = deviceID
        self.provider = provider
        self.token = token
        self.room = room
        self.quietHours = quietHours
        self.unread = unread
    }
}

/// The room and actor as a push names them.
public struct PushRoomContext: Sendable, Equatable {
    public let roomUID: String
    public let roomName: String?
    public let twoParty: Bool
    public let actorName: String?

    public init(roomUID: String, roomName: String?, twoParty: Bool, actorName: String?) {
        self.roomUID = roomUID
        self.roomName = roomName
        self.twoParty = twoParty
        self.actorName = actorName
    }
}

/// What the fan-out reads to queue pushes.
///
/// Each asks once for a whole fan-out batch, however many rooms it spans.
public protocol PushAudience: Sendable {
    /// For each room, the devices with a push token of its users, with their settings for
    /// that room; rooms where nobody has a device may be absent.
    func recipients(in rooms: [Int64: Set<Int64>]) async throws -> [Int64: [PushRecipient]]
    /// What pushes say about each room and its actor (the user who sent or added); a room
    /// deleted meanwhile is absent.
    func contexts(of rooms: Set<RoomUser>) async throws -> [RoomUser: PushRoomContext]
    /// Which of these pairs are blocks: a blocked actor pushes nothing to the blocker.
    func blocks(among pairs: Set<UserBlock>) async throws -> Set<UserBlock>
}

/// One user blocking another.
public struct UserBlock: Hashable, Sendable {
    public let blockerID: Int64
    public let blockedID: Int64

    public init(blockerID: Int64, blockedID: Int64) {
        self.blockerID = blockerID
        self.blockedID = blockedID
    }
}

/// Push tokens the providers reported dead.
public protocol PushTokenStore: Sendable {
    /// Removes the token only if the device still has this one (a newer one stays).
    func removeToken(deviceID: Int64, token: String) async throws
}

/// What a provider made of one push.
public enum PushOutcome: Sendable, Equatable {
    case delivered
    /// The token will never work again (the app was removed, the token belongs elsewhere).
    case deadToken(reason: String)
    /// Throttled or failing: try again, after `after` when the provider said so.
    case retry(after: Duration?, reason: String)
    /// The provider refused this push for good.
    case rejected(reason: String)
}

/// Sends pushes through one provider (APNs, FCM, a webhook).
public protocol PushSender: Sendable {
    /// Transport failures throw (and are retried); provider answers are outcomes.
    func send(_ job: PushJob) async throws -> PushOutcome
}

/// Preferences behind the notification routes.
public protocol NotificationSettingsRepository: Sendable {
    func roomSettings(roomID: Int64, userID: Int64) async throws -> RoomNotificationSettings
    func setRoomSettings(_ settings: RoomNotificationSettings, roomID: Int64, userID: Int64) async throws
    func quietHours(userID: Int64) async throws -> QuietHours?
    func setQuietHours(_ quietHours: QuietHours?, userID: Int64) async throws
}
