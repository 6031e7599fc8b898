import Foundation

/// An endpoint of the app's backend that hears the events it subscribed to, signed with its
/// secret as the Standard Webhooks specification says (``WebhookSignature``). Webhooks are
/// server-wide: an app's backend is one receiver; it filters by event type.
public struct Webhook: Sendable, Equatable, Codable {
    public let id: Int64
    public let url: String
    public let events: [WebhookEvent.Kind]
    @NullEncoded public var description: String?
    /// False once disabled by an administrator, or after failing for three days
    /// (``disabledAt`` says when, then).
    public let enabled: Bool
    /// Since when every delivery has failed; null while it succeeds.
    @NullEncoded public var failingSince: Date?
    public let createdAt: Date

    public init(
        id: Int64, url: String, events: [WebhookEvent.Kind], description: String?, enabled: Bool,
        failingSince: Date?, createdAt: Date
    ) {
        self.id = id
        self.url = url
        self.events = events
        self.description = description
        self.enabled = enabled
        self.failingSince = failingSince
        self.createdAt = createdAt
    }
}

/// A webhook with its secret: the only answer that carries it (`POST /v1/admin/webhooks`).
public typealias CreatedWebhook = WithSecret<Webhook>

/// One event on its way to one webhook: its id is the `webhook-id` header, kept by retries.
public struct WebhookDelivery: Sendable, Equatable, Encodable {
    public enum Status: String, Sendable, Codable, CaseIterable {
        /// Not delivered yet: waiting for its turn or for its next attempt.
        case pending
        case succeeded
        /// Dead: still failing 24 hours after it was first tried (or its body too large).
        case failed
    }

    /// One try: when, the answer's status or why there was none, how long it took.
    public struct Attempt: Sendable, Equatable, Codable {
        public let at: Date
        @NullEncoded public var statusCode: Int?
        @NullEncoded public var error: String?
        public let durationMs: Int

        public init(at: Date, statusCode: Int?, error: String?, durationMs: Int) {
            self.at = at
            self.statusCode = statusCode
            self.error = error
            self.durationMs = durationMs
        }
    }

    public let id: String
    public let webhookId: Int64
    /// The event's type (`message.created`, …), or `command` for a command sent to a bot.
    public let type: String
    public let status: Status
    public let createdAt: Date
    @NullEncoded public var nextAttemptAt: Date?
    public let attempts: [Attempt]
    /// Where the next page of a list starts (not answered as a field: `nextCursor` is).
    public let cursor: String

    public init(
        id: String, webhookId: Int64, type: String, status: Status, createdAt: Date, nextAttemptAt: Date?,
        attempts: [Attempt], cursor: String
    ) {
        self.id = id
        self.webhookId = webhookId
        self.type = type
        self.status = status
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.attempts = attempts
        self.cursor = cursor
    }

    enum CodingKeys: String, CodingKey { case id, webhookId, type, status, createdAt, nextAttemptAt, attempts }
}
