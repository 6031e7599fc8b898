import Crypto
import Foundation
import ParleyCore
import Synchronization

/// Apple Push Notification service over HTTP/2 with token-based authentication.
public struct APNsConfiguration: Sendable {
    public enum Environment: String, Sendable, CaseIterable {
        case production, sandbox

        public var url: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .sandbox: "https://api.sandbox.push.apple.com"
            }
        }
    }

    /// The `.p8` signing key from Apple's developer account (PKCS #8 PEM).
    public var key: P256.Signing.PrivateKey
    public var keyID: String
    public var teamID: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// Where requests go: an environment's URL, or a gateway's.
    public var baseURL: String
    /// How long APNs keeps trying to deliver (`apns-expiration`).
    public var expiration: Duration

    public init(
        key: P256.Signing.PrivateKey, keyID: String, teamID: String, topic: String,
        baseURL: String = Environment.production.url, expiration: Duration = .seconds(86_400)
    ) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.baseURL = baseURL
        self.expiration = expiration
    }
}

/// Sends pushes to APNs: `POST /3/device/{token}` with a provider token, one HTTP/2
/// connection and a stream per push.
public final class APNsSender: PushSender {
    let configuration: APNsConfiguration
    let client: PushHTTPClient
    let tokens: ProviderTokenCache

    public init(configuration: APNsConfiguration, client: PushHTTPClient) {
        self.configuration = configuration
        self.client = client
        // Apple refuses tokens older than an hour and more than one new token per 20 minutes.
        tokens = ProviderTokenCache(lifetime: .seconds(50 * 60))
    }

    public func send(_ job: PushJob) async throws -> PushOutcome {
        var (response, token) = try await post(job)
        if response.status == 403, reason(response) == "ExpiredProviderToken" {
            // Only the refused token: concurrent sends may already hold a newer one, and
            // Apple throttles providers that renew too often.
            tokens.invalidate(ifCurrent: token)
            (response, token) = try await post(job)
        }
        return outcome(response)
    }

    private func post(_ job: PushJob) async throws -> (PushHTTPClient.Response, String) {
        let token = try tokens.token {
            try JSONWebToken.es256(
                Claims(iss: configuration.teamID, iat: Int(Date().timeIntervalSince1970)), keyID: configuration.keyID,
                key: configuration.key)
        }
        let expiration = Int(Date().timeIntervalSince1970) + Int(configuration.expiration.components.seconds)
        let path = job.token.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? job.token
        var headers = [("authorization", "bearer \(token)"), ("apns-topic", configuration.topic)]
        headers += Self.kindHeaders(job.notification)
        headers += [("apns-expiration", "\(expiration)"), ("content-type", "application/json")]
        let response = try await client.post(
            "\(configuration.baseURL)/3/device/\(path)", headers: headers, body: try Self.payload(job.notification))
        return (response, token)
    }

    func outcome(_ response: PushHTTPClient.Response) -> PushOutcome {
        // Success has an empty body: nothing to parse.
        guard response.status != 200 else { return .delivered }
        let reason = reason(response) ?? "HTTP \(response.status)"
        switch response.status {
        case 410: return .deadToken(reason: reason)
        // Not DeviceTokenNotForTopic: a misconfigured topic would wipe every iOS token.
        case 400 where reason == "BadDeviceToken":
            return .deadToken(reason: reason)
        case 429, 500...599: return .retry(after: response.retryAfter, reason: reason)
        default: return .rejected(reason: reason)
        }
    }

    private func reason(_ response: PushHTTPClient.Response) -> String? {
        response.json?["reason"] as? String
    }

    /// RFC 3986 unreserved characters: a token is one path segment, whatever it holds.
    static let unreserved = CharacterSet(charactersIn: "-._~").union(.alphanumerics)

    struct Claims: Encodable {
        let iss: String
        let iat: Int
    }

    /// What kind of push it is: an alert collapsed per room (a later push of the room replaces
    /// an earlier one), or for a read a background push, which Apple delivers at low priority
    /// and which must not be collapsed with the alerts it withdraws.
    static func kindHeaders(_ notification: PushNotification) -> [(String, String)] {
        guard notification.reason != .read else { return [("apns-push-type", "background"), ("apns-priority", "5")] }
        return [
            ("apns-push-type", "alert"), ("apns-priority", "10"),
            ("apns-collapse-id", String(notification.roomUID.utf8.prefix(64)) ?? notification.roomUID),
        ]
    }

    /// The APNs JSON: `aps` for the system, `parley` with the ids for the app (and `mention:
    /// true` when the message mentions the recipient). With ids only, the alert is a
    /// localisation key and `mutable-content` lets the app fill it in. A read's has no alert:
    /// `content-available` wakes the app to withdraw the room's notifications up to `seq`, and
    /// the badge is set.
    static func payload(_ notification: PushNotification) throws -> Data {
        var parley: [String: Any] = notification.data
        if notification.mention { parley["mention"] = true }
        return try JSONSerialization.data(
            withJSONObject: ["aps": aps(notification), "parley": parley], options: .sortedKeys)
    }

    /// The `aps` dictionary, also sent to iOS devices through FCM.
    static func aps(_ notification: PushNotification) -> [String: Any] {
        if notification.reason == .read { return ["content-available": 1, "badge": notification.badge] }
        var alert: [String: String] = [:]
        if let title = notification.title { alert["title"] = title }
        if let body = notification.body { alert["body"] = body }
        if alert.isEmpty { alert["loc-key"] = notification.reason == .message ? "PARLEY_NEW_MESSAGE" : "PARLEY_ADDED" }
        return [
            "alert": alert, "badge": notification.badge, "sound": "default", "thread-id": notification.roomUID,
            "mutable-content": 1,
        ]
    }
}

/// A bearer token reused until it is `lifetime` old (or refused).
final class ProviderTokenCache: Sendable {
    let lifetime: Duration
    private let state = Mutex<(token: String, issued: ContinuousClock.Instant)?>(nil)

    init(lifetime: Duration) { self.lifetime = lifetime }

    func token(make: () throws -> String) throws -> String {
        try state.withLock { current in
            if let current, current.issued.duration(to: .now) < lifetime { return current.token }
            let token = try make()
            current = (token, .now)
            return token
        }
    }

    /// Forgets `token` if it is still the one handed out.
    func invalidate(ifCurrent token: String) {
        state.withLock { current in
            if current?.token == token { current = nil }
        }
    }
}
