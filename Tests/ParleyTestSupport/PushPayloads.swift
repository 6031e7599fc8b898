import Foundation
import ParleyPushSimulator

/// The bodies Parley sends the push providers, read back as types. Parley writes them as
/// dictionaries (no Swift type to decode into); these mirror the keys it writes, under the
/// providers' own names.

/// APNs: `aps` for the system, `parley` for the app.
public struct APNsPayload: Decodable, Sendable {
    public struct APS: Decodable, Sendable {
        /// None in a read's background push.
        public let alert: PushText?
        public let badge: Int
        public let threadID: String?
        /// 1 in a read's background push.
        public let contentAvailable: Int?

        enum CodingKeys: String, CodingKey {
            case alert, badge
            case threadID = "thread-id"
            case contentAvailable = "content-available"
        }
    }

    /// The notification's ids as strings, and `mention` a Bool (FCM's data says "true").
    public struct Parley: Decodable, Sendable {
        public let type: String
        public let chatRoomId: String
        public let messageId: String?
        public let mention: Bool?
        public let seq: String?
    }

    public let aps: APS
    public let parley: Parley
}

/// FCM's HTTP v1 `{message}`; its `data` holds strings only.
public struct FCMPayload: Decodable, Sendable {
    public struct Message: Decodable, Sendable {
        public let token: String
        /// Only with a title or a body.
        public let notification: PushText?
        public let data: [String: String]
        public let android: Android
    }

    public struct Android: Decodable, Sendable {
        /// None in a read's data message.
        public let collapseKey: String?
        public let priority: String

        enum CodingKeys: String, CodingKey {
            case collapseKey = "collapse_key"
            case priority
        }
    }

    public let message: Message
}

/// The webhook's body; its `data` as FCM's.
public struct WebhookPayload: Decodable, Sendable {
    public let token: String
    public let badge: Int
    public let data: [String: String]
}

/// An APNs alert or an FCM notification.
public struct PushText: Decodable, Sendable {
    public let title: String?
    public let body: String?
}

extension ReceivedPush {
    /// The body as `type`.
    public func decoded<Payload: Decodable>(_ type: Payload.Type) throws -> Payload {
        try JSONDecoder().decode(Payload.self, from: body)
    }
}
