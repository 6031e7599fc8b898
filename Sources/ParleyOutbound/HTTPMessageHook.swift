import Foundation
import ParleyCore

/// The message hook over HTTP (`PARLEY_MESSAGE_HOOK_URL`): `{"messages": [...]}` signed as
/// webhooks are (`PARLEY_MESSAGE_HOOK_SECRET`), answered by `{"results": [...]}`, one per
/// message: `{"action": "allow"}`, `{"action": "reject", "reason"}` or `{"action": "replace",
/// "content", "metadata"?}`. No answer within the time limit, a status other than 2xx or
/// another shape is a failure (``ParleyCore/MessageHookGate`` decides what follows).
public struct HTTPMessageHook: MessageHook {
    let url: String
    let signature: WebhookSignature
    let timeout: Duration
    let client: OutboundHTTPClient

    public init(url: String, signature: WebhookSignature, timeout: Duration, client: OutboundHTTPClient) {
        self.url = url
        self.signature = signature
        self.timeout = timeout
        self.client = client
    }

    struct Request: Encodable {
        let messages: [HookedMessage]
    }

    struct Answer: Decodable {
        let results: [Verdict]
    }

    /// One message's answer.
    struct Verdict: Decodable {
        let verdict: MessageVerdict

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            switch try container.decode(String.self, forKey: .action) {
            case "allow": verdict = .allow
            case "reject":
                let reason = try container.decodeIfPresent(String.self, forKey: .reason)
                verdict = .reject(reason: String((reason ?? "Rejected by the app's policy.").prefix(500)))
            case "replace":
                let metadata: MessageMetadata?? =
                    container.contains(.metadata)
                    ? .some(try container.decodeIfPresent(MessageMetadata.self, forKey: .metadata)) : .none
                verdict = .replace(content: try container.decode(String.self, forKey: .content), metadata: metadata)
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .action, in: container, debugDescription: "action is allow, reject or replace")
            }
        }

        enum Keys: String, CodingKey { case action, reason, content, metadata }
    }

    struct RefusedAnswer: Error {
        let status: Int
    }

    public func review(_ messages: [HookedMessage]) async throws -> [MessageVerdict] {
        let body = try JSONCoding.encoder.encode(Request(messages: messages))
        let headers =
            signature.headers(
                id: "hook_\(UUID().uuidString.lowercased())", timestamp: Int(Date().timeIntervalSince1970), body: body)
            + [("content-type", "application/json"), ("user-agent", "Parley-MessageHook/1")]
        let (status, answer) = try await client.post(url, headers: headers, body: body, timeout: timeout)
        guard (200..<300).contains(status) else { throw RefusedAnswer(status: status) }
        return try JSONCoding.decoder.decode(Answer.self, from: answer).results.map(\.verdict)
    }
}
