import Foundation

/// Why a user is pushed.
public enum PushReason: String, Codable, Sendable {
    /// A new message in a room the user reads.
    case message
    /// The user was added to a room.
    case added
    /// The user read a room (from any device): a silent update of every device's badge and of
    /// what it shows of the room (APNs background push, FCM data message).
    case read
}

/// What a fan-out pushes besides publishing its event (carried by ``FanoutJob``).
public struct PushIntent: Codable, Sendable, Equatable {
    public let reason: PushReason
    /// The sender or the editor who added the user; never pushed to.
    public let actorID: Int64
    public let messageID: Int64?
    public let seq: Int64?
    /// The message text; dropped by the fan-out when pushes carry ids only.
    public let content: String?
    /// Users the message mentions: pushed through level `mentions`, and told so.
    public let mentions: [Int64]?

    public init(
        reason: PushReason, actorID: Int64, messageID: Int64? = nil, seq: Int64? = nil, content: String? = nil,
        mentions: [Int64]? = nil
    ) {
        self.reason = reason
        self.actorID = actorID
        self.messageID = messageID
        self.seq = seq
        self.content = content
        self.mentions = mentions
    }

    public static func message(_ message: Message) -> PushIntent {
        PushIntent(
            reason: .message, actorID: message.sentById ?? 0, messageID: message.id, seq: message.seq,
            content: message.content, mentions: message.mentions.isEmpty ? nil : message.mentions)
    }

    public func mentions(_ userID: Int64) -> Bool { mentions?.contains(userID) ?? false }
}

/// The provider-neutral content of one push.
public struct PushNotification: Codable, Sendable, Equatable {
    public let reason: PushReason
    public let roomID: Int64
    public let roomUID: String
    /// Room name, or the sender's name in a two-party room; `nil` when pushes carry ids only.
    public let title: String?
    /// Sender and content preview; `nil` when pushes carry ids only.
    public let body: String?
    public let actorID: Int64
    public let messageID: Int64?
    public let seq: Int64?
    /// The recipient's unread messages over all rooms.
    public let badge: Int
    /// The message mentions the recipient (`parley.mention` for the app).
    public let mention: Bool

    public init(
        reason: PushReason, roomID: Int64, roomUID: String, title: String?, body: String?, actorID: Int64,
        messageID: Int64?, seq: Int64?, badge: Int, mention: Bool = false
    ) {
        self.reason = reason
        self.roomID = roomID
        self.roomUID = roomUID
        self.title = title
        self.body = body
        self.actorID = actorID
        self.messageID = messageID
        self.seq = seq
        self.badge = badge
        self.mention = mention
    }

    /// Jobs queued before mentions existed have no `mention`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            reason: try container.decode(PushReason.self, forKey: .reason),
            roomID: try container.decode(Int64.self, forKey: .roomID),
            roomUID: try container.decode(String.self, forKey: .roomUID),
            title: try container.decodeIfPresent(String.self, forKey: .title),
            body: try container.decodeIfPresent(String.self, forKey: .body),
            actorID: try container.decode(Int64.self, forKey: .actorID),
            messageID: try container.decodeIfPresent(Int64.self, forKey: .messageID),
            seq: try container.decodeIfPresent(Int64.self, forKey: .seq),
            badge: try container.decode(Int.self, forKey: .badge),
            mention: try container.decodeIfPresent(Bool.self, forKey: .mention) ?? false)
    }

    enum CodingKeys: String, CodingKey {
        case reason, roomID, roomUID, title, body, actorID, messageID, seq, badge, mention
    }

    /// Identifiers for the app, as strings (FCM data values must be strings).
    public var data: [String: String] {
        let type =
            switch reason {
            case .message: "new-message"
            case .added: "added"
            case .read: "read"
            }
        var data = ["type": type, "chatRoomId": "\(roomID)", "chatRoomUid": roomUID, "actorId": "\(actorID)"]
        if let messageID { data["messageId"] = "\(messageID)" }
        if let seq { data["seq"] = "\(seq)" }
        if mention { data["mention"] = "true" }
        return data
    }
}

/// Work for the `push` role: one notification to one device.
public struct PushJob: Codable, Sendable, Equatable {
    public let deviceID: Int64
    public let userID: Int64
    public let provider: PushProvider
    public let token: String
    public let notification: PushNotification
    /// The fan-out's span of the message pushed (``PipelineTrace``).
    public let traceparent: String?

    public init(
        deviceID: Int64, userID: Int64, provider: PushProvider, token: String, notification: PushNotification,
        traceparent: String? = nil
    ) {
        self.deviceID = deviceID
        self.userID = userID
        self.provider = provider
        self.token = token
        self.notification = notification
        self.traceparent = traceparent
    }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
