import Crypto
import Foundation
import ParleyCore

/// A JSON POST per push to a self-hosted gateway.
///
/// With a secret, `X-Parley-Signature: sha256=<hex>` is the HMAC-SHA256 of
/// `<X-Parley-Timestamp>.<body>`, so the gateway can tell Parley's requests from anyone
/// else's and refuse old ones.
public struct WebhookConfiguration: Sendable {
    public var url: String
    public var secret: String?

    public init(url: String, secret: String? = nil) {
        self.url = url
        self.secret = secret
    }
}

public final class WebhookSender: PushSender {
    let configuration: WebhookConfiguration
    let client: PushHTTPClient

    public init(configuration: WebhookConfiguration, client: PushHTTPClient) {
        self.configuration = configuration
        self.client = client
    }

    struct Body: Encodable {
        let token: String
        let userId: Int64
        let deviceId: Int64
        let title: String?
        let body: String?
        let badge: Int
        let collapseId: String
        let data: [String: String]
    }

    public func send(_ job: PushJob) async throws -> PushOutcome {
        let note = job.notification
        let body = try JSONCoding.encoder.encode(
            Body(
                token: job.token, userId: job.userID, deviceId: job.deviceID, title: note.title, body: note.body,
                badge: note.badge, collapseId: note.roomUID, data: note.data))
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var headers = [("content-type", "application/json"), ("x-parley-timestamp", timestamp)]
        if let secret = configuration.secret {
            headers.append(("x-parley-signature", Self.signature(secret: secret, timestamp: timestamp, body: body)))
        }
        let response = try await client.post(configuration.url, headers: headers, body: body)
        switch response.status {
        case 200..<300: return .delivered
        // Only 410: a wrong URL answers 404, and must not wipe every token.
        case 410: return .deadToken(reason: "HTTP \(response.status)")
        case 429, 500...599: return .retry(after: response.retryAfter, reason: "HTTP \(response.status)")
        default: return .rejected(reason: "HTTP \(response.status)")
        }
    }

    /// `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: the timestamp lets the
    /// gateway refuse replays.
    public static func signature(secret: String, timestamp: String, body: Data) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data((timestamp + ".").utf8) + body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + mac.hexString
    }
}
