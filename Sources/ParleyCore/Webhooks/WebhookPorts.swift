import Foundation

/// Webhooks as administrators keep them, and their deliveries as they list them.
public protocol WebhookRepository: Sendable {
    func create(url: String, events: [WebhookEvent.Kind], description: String?, key: [UInt8]) async throws -> Webhook
    /// Oldest first, after `afterID`.
    func list(afterID: Int64?, limit: Int) async throws -> [Webhook]
    func webhook(id: Int64) async throws -> Webhook?
    /// Sets what is given (`description: .some(nil)` clears it); enabling clears the failure
    /// record. Nil when there is no such webhook.
    func update(_ id: Int64, change: WebhookChange) async throws -> Webhook?
    /// False when there was none; its deliveries go with it.
    func delete(id: Int64) async throws -> Bool
    /// Newest first, before the delivery `before` (a cursor), of one status or all.
    func deliveries(webhookID: Int64, status: WebhookDelivery.Status?, before: String?, limit: Int) async throws
        -> [WebhookDelivery]
    /// Makes a delivery that is not pending pending again, due now, keeping its id; false when
    /// there is none (or it is pending).
    func retry(deliveryID: String, webhookID: Int64) async throws -> Bool
    /// Queues a `webhook.ping` to the webhook; its delivery id. Nil when there is no such webhook.
    func ping(webhookID: Int64, data: String) async throws -> String?
}

/// What `PATCH /v1/admin/webhooks/{id}` changes.
public struct WebhookChange: Sendable, Equatable {
    public var url: String?
    public var events: [WebhookEvent.Kind]?
    public var description: String??
    public var enabled: Bool?

    public init(
        url: String? = nil, events: [WebhookEvent.Kind]? = nil, description: String?? = nil, enabled: Bool? = nil
    ) {
        self.url = url
        self.events = events
        self.description = description
        self.enabled = enabled
    }
}

/// An event on its way from the outbox relay to the webhooks (their queue's jobs).
public struct QueuedWebhookEvent: Sendable, Equatable, Codable {
    /// Unique per event (the outbox row's): a delivery's id is made of it and the webhook's, so
    /// an event queued twice is delivered once.
    public let id: String
    public let type: WebhookEvent.Kind
    public let roomId: Int64?
    public let timestamp: Date
    /// The payload's JSON.
    public let data: String

    public init(id: String, type: WebhookEvent.Kind, roomId: Int64?, timestamp: Date, data: String) {
        self.id = id
        self.type = type
        self.roomId = roomId
        self.timestamp = timestamp
        self.data = data
    }

    /// The request body: `{"type", "timestamp", "data"}`.
    public var body: String {
        let stamp = String(decoding: (try? JSONCoding.encoder.encode(timestamp)) ?? Data("null".utf8), as: UTF8.self)
        return #"{"data":\#(data),"timestamp":\#(stamp),"type":"\#(type.rawValue)"}"#
    }

    /// A batch of events as one queue job (one JSON array).
    public static func job(_ events: [QueuedWebhookEvent]) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(events)) ?? Data("[]".utf8), as: UTF8.self)
    }

    public static func events(ofJob job: String) throws -> [QueuedWebhookEvent] {
        try JSONCoding.decoder.decode([QueuedWebhookEvent].self, from: Data(job.utf8))
    }
}

/// The delivery side: deliveries recorded from queued events, claimed lane by lane, finished.
public protocol WebhookDeliveryStore: Sendable {
    /// What the relay queues: the event types some enabled webhook subscribes to, and whether
    /// some bot hears commands.
    func subscriptions() async throws -> WebhookSubscriptions
    /// Records a delivery of each event to every enabled webhook that subscribes to it; an
    /// event recorded before is not recorded again.
    func record(_ events: [QueuedWebhookEvent]) async throws
    /// Records a delivery of each command to the bot it names, where that bot has a webhook and
    /// is a member of the room (and did not send it); a command recorded before is not
    /// recorded again.
    func record(commands: [BotCommand], at timestamp: Date) async throws
    /// Leases, for `lease`, the first `perLane` pending deliveries (in order) of up to `lanes`
    /// lanes (a webhook and a room: later events of the room wait behind the oldest) whose
    /// oldest is due and not leased, the longest due first. Its cost follows the lanes with
    /// pending deliveries, not the deliveries waiting in them.
    func claimDue(lanes: Int, perLane: Int, lease: Duration) async throws -> [[DueWebhookDelivery]]
    /// Gives leased deliveries back (a lane stopped at a failure before reaching them).
    func release(_ deliveryIDs: [String]) async throws
    /// Records the attempt and what follows; when a webhook failing since three days is
    /// disabled by it, the webhook.
    func finish(_ delivery: DueWebhookDelivery, attempt: WebhookDelivery.Attempt, next: WebhookDeliveryOutcome)
        async throws -> Webhook?
}

/// What the relay hands the webhooks role.
public struct WebhookSubscriptions: Sendable, Equatable {
    public var kinds: Set<WebhookEvent.Kind>
    /// Some bot has a webhook: new messages that start with `/` are queued for it.
    public var botCommands: Bool

    public init(kinds: Set<WebhookEvent.Kind>, botCommands: Bool) {
        self.kinds = kinds
        self.botCommands = botCommands
    }

    /// While the subscriptions cannot be read: everything.
    public static let all = WebhookSubscriptions(kinds: Set(WebhookEvent.Kind.allCases), botCommands: true)
    public var isEmpty: Bool { kinds.isEmpty && !botCommands }
}

/// A delivery leased for an attempt, with what the attempt needs.
public struct DueWebhookDelivery: Sendable, Equatable {
    public let id: String
    public let webhookID: Int64
    /// A command's delivery: the bot whose answer is said in ``roomID``.
    public var botID: Int64?
    /// The room of its event; 0 for none.
    public var roomID: Int64 = 0
    public let url: String
    public let key: [UInt8]
    public let body: String
    /// When the first attempt was made; nil before it.
    public let firstAttemptAt: Date?
    public let attempts: Int
    /// Since when the webhook fails; nil while it succeeds.
    public let failingSince: Date?

    public init(
        id: String, webhookID: Int64, url: String, key: [UInt8], body: String, firstAttemptAt: Date?, attempts: Int,
        failingSince: Date?
    ) {
        self.id = id
        self.webhookID = webhookID
        self.url = url
        self.key = key
        self.body = body
        self.firstAttemptAt = firstAttemptAt
        self.attempts = attempts
        self.failingSince = failingSince
    }
}

/// After an attempt: done, tried again at a time, or given up (dead).
public enum WebhookDeliveryOutcome: Sendable, Equatable {
    case succeeded
    case retry(at: Date)
    /// Dead; `disable` when the webhook has failed for three days and is turned off.
    case failed(disable: Bool)
}

/// Sends one signed request to a checked address (``OutboundRule``), without following a
/// redirect, within a time limit; its answer's status and body (up to 64 KiB of it: a bot's
/// answer to a command).
public protocol WebhookTransport: Sendable {
    func post(_ url: String, headers: [(String, String)], body: Data, timeout: Duration) async throws
        -> (status: Int, body: Data)
    /// Closes its connections; called once, when its user stops.
    func shutdown() async throws
}

/// Why a request to another server got no answer, in a few words for a delivery's log
/// (`timed out`, `connection refused`, `TLS failed`): no address or internal of this server.
public struct OutboundRequestFailure: Error, Equatable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
