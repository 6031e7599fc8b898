import Foundation
import ParleyCore
import _CryptoExtras

/// Firebase Cloud Messaging HTTP v1 with a service account.
public struct FCMConfiguration: Sendable {
    /// The fields of the service-account JSON file that are used.
    public struct ServiceAccount: Decodable, Sendable {
        public let projectID: String
        public let clientEmail: String
        public let privateKey: String
        public let privateKeyID: String?
        public let tokenURI: String

        enum CodingKeys: String, CodingKey {
            case projectID = "project_id"
            case clientEmail = "client_email"
            case privateKey = "private_key"
            case privateKeyID = "private_key_id"
            case tokenURI = "token_uri"
        }
    }

    public var account: ServiceAccount
    public var key: _RSA.Signing.PrivateKey
    /// Where `messages:send` goes (Google's, or a gateway's).
    public var baseURL: String
    /// How long FCM keeps trying to deliver.
    public var timeToLive: Duration

    /// Reads a service-account JSON document as Google issues it.
    public init(
        serviceAccountJSON: Data, baseURL: String = "https://fcm.googleapis.com",
        timeToLive: Duration = .seconds(86_400)
    ) throws {
        account = try JSONDecoder().decode(ServiceAccount.self, from: serviceAccountJSON)
        key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKey)
        self.baseURL = baseURL
        self.timeToLive = timeToLive
    }
}

/// Sends pushes through FCM's `projects/{id}/messages:send`, authorised by an OAuth2 access
/// token obtained with a signed service-account assertion (RS256) and reused until it expires.
public final class FCMSender: PushSender {
    let configuration: FCMConfiguration
    let client: PushHTTPClient
    let accessTokens: GoogleAccessTokens

    public init(configuration: FCMConfiguration, client: PushHTTPClient) {
        self.configuration = configuration
        self.client = client
        accessTokens = GoogleAccessTokens(configuration: configuration, client: client)
    }

    public func send(_ job: PushJob) async throws -> PushOutcome {
        let token = try await accessTokens.token()
        var response = try await post(job, accessToken: token)
        if response.status == 401 {
            // Revoked or expired early: one fresh token, then the answer stands.
            await accessTokens.invalidate(ifCurrent: token)
            response = try await post(job, accessToken: try await accessTokens.token())
        }
        return outcome(response)
    }

    private func post(_ job: PushJob, accessToken: String) async throws -> PushHTTPClient.Response {
        try await client.post(
            "\(configuration.baseURL)/v1/projects/\(configuration.account.projectID)/messages:send",
            headers: [("authorization", "Bearer \(accessToken)"), ("content-type", "application/json")],
            body: try message(job))
    }

    func outcome(_ response: PushHTTPClient.Response) -> PushOutcome {
        guard response.status != 200 else { return .delivered }
        let error = response.json?["error"] as? [String: Any]
        let status = error?["status"] as? String
        let details = (error?["details"] as? [[String: Any]]) ?? []
        let fcmCode = details.compactMap { $0["errorCode"] as? String }.first
        let reason = fcmCode ?? status ?? "HTTP \(response.status)"
        switch response.status {
        case 404 where status == "NOT_FOUND" || fcmCode == "UNREGISTERED": return .deadToken(reason: reason)
        case 400 where fcmCode == "UNREGISTERED": return .deadToken(reason: reason)
        case 429, 500...599: return .retry(after: response.retryAfter, reason: reason)
        default: return .rejected(reason: reason)
        }
    }

    /// The v1 message: a notification (unless ids only), string data for the app, and the
    /// room as Android's collapse key and tag and as APNs's collapse id. A read's is a data
    /// message (`type: read`, the room, `seq` and `badge`): the app withdraws what it shows.
    func message(_ job: PushJob) throws -> Data {
        let note = job.notification
        var data = note.data
        data["badge"] = "\(note.badge)"
        let ttl = configuration.timeToLive.components.seconds
        if note.reason == .read {
            let message: [String: Any] = [
                "token": job.token, "data": data, "android": ["priority": "normal", "ttl": "\(ttl)s"],
                "apns": [
                    "headers": ["apns-push-type": "background", "apns-priority": "5"],
                    "payload": ["aps": APNsSender.aps(note)],
                ],
            ]
            return try JSONSerialization.data(withJSONObject: ["message": message], options: .sortedKeys)
        }
        var android: [String: Any] = ["priority": "high", "collapse_key": note.roomUID, "ttl": "\(ttl)s"]
        var message: [String: Any] = [
            "token": job.token, "data": data,
            "apns": [
                "headers": [
                    "apns-collapse-id": String(note.roomUID.prefix(64)),
                    "apns-expiration": String(Int(Date().timeIntervalSince1970) + Int(ttl)),
                ],
                "payload": ["aps": APNsSender.aps(note)],
            ],
        ]
        if note.title != nil || note.body != nil {
            var notification: [String: String] = [:]
            if let title = note.title { notification["title"] = title }
            if let body = note.body { notification["body"] = body }
            message["notification"] = notification
            android["notification"] = ["tag": note.roomUID, "notification_count": note.badge] as [String: Any]
        }
        message["android"] = android
        return try JSONSerialization.data(withJSONObject: ["message": message], options: .sortedKeys)
    }
}

/// OAuth2 access tokens for a service account (RFC 7523 JWT bearer grant), shared by all
/// concurrent sends; one request refreshes the token for everyone waiting.
actor GoogleAccessTokens {
    let configuration: FCMConfiguration
    let client: PushHTTPClient
    private var current: (token: String, expires: ContinuousClock.Instant)?
    private var refreshing: Task<(String, ContinuousClock.Instant), any Error>?

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    init(configuration: FCMConfiguration, client: PushHTTPClient) {
        self.configuration = configuration
        self.client = client
    }

    func token() async throws -> String {
        // Renewed five minutes before it runs out.
        if let current, ContinuousClock.now.duration(to: current.expires) > .seconds(300) { return current.token }
        // One refresh for every caller waiting.
        if let refreshing { return try await refreshing.value.0 }
        let task = Task { [configuration, client] in try await Self.fetch(configuration: configuration, client: client)
        }
        refreshing = task
        defer { refreshing = nil }
        let (token, expires) = try await task.value
        current = (token, expires)
        return token
    }

    /// Forgets `token` if it is still the current one (a concurrent send may have renewed it).
    func invalidate(ifCurrent token: String) {
        if current?.token == token { current = nil }
    }

    struct Assertion: Encodable {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int
        let exp: Int
    }

    static func fetch(configuration: FCMConfiguration, client: PushHTTPClient) async throws -> (
        String, ContinuousClock.Instant
    ) {
        let now = Int(Date().timeIntervalSince1970)
        let assertion = try JSONWebToken.rs256(
            Assertion(
                iss: configuration.account.clientEmail, scope: scope, aud: configuration.account.tokenURI, iat: now,
                exp: now + 3600), keyID: configuration.account.privateKeyID, key: configuration.key)
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response = try await client.post(
            configuration.account.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Data(form.utf8))
        guard response.status == 200, let json = response.json, let token = json["access_token"] as? String else {
            throw FCMAuthorisationError(status: response.status)
        }
        let lifetime = (json["expires_in"] as? Int) ?? 3600
        return (token, .now + .seconds(lifetime))
    }
}

/// Google refused the service account's assertion (the job is retried; the operator must fix it).
struct FCMAuthorisationError: Error, CustomStringConvertible {
    let status: Int
    var description: String { "the OAuth2 token endpoint answered HTTP \(status)" }
}
