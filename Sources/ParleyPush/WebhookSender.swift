import Crypto
import Foundation
import ParleyCore

/// A JSON POST per push to a self-hosted gateway.
///
/// With a secret, `X-Parley-Signature: sha256=<hex>` is the HMAC-SHA256 of the body, so the
/// gateway can tell Parley's requests from anyone else's.
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
        var headers = [("content-type", "application/json")]
        if let secret = configuration.secret {
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
            headers.append(("x-parley-signature", "sha256=" + mac.map { String(format: "%02x", $0) }.joined()))
        }
        let response = try await client.post(configuration.url, headers: headers, body: body)
        switch response.status {
        case 200..<300: return .delivered
        case 404, 410: return .deadToken(reason: "HTTP \(response.status)")
        case 429, 500...599: return .retry(after: response.retryAfter, reason: "HTTP \(response.status)")
        default: return .rejected(reason: "HTTP \(response.status)")
        }
    }
}
