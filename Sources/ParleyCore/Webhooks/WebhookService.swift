import Foundation

/// Webhooks as administrators register, change, ping and retry them. A URL is checked by the
/// outbound rule (``OutboundRule``) when registered, its name resolved; the endpoint is not
/// called (a ping calls it).
public struct WebhookService: Sendable {
    let webhooks: any WebhookRepository
    let rule: OutboundRule
    let resolver: any AddressResolver

    public init(webhooks: any WebhookRepository, rule: OutboundRule, resolver: any AddressResolver) {
        self.webhooks = webhooks
        self.rule = rule
        self.resolver = resolver
    }

    public func create(url: String, events: [WebhookEvent.Kind], description: String?) async throws
        -> CreatedWebhook
    {
        let url = try await checked(url)
        let events = try Self.events(events)
        let description = try description.flatMap(Self.description)
        let (key, secret) = WebhookSignature.generate()
        let webhook = try await webhooks.create(url: url, events: events, description: description, key: key)
        return CreatedWebhook(webhook, secret: secret)
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [Webhook] {
        try await webhooks.list(afterID: afterID, limit: limit)
    }

    public func update(_ id: Int64, change: WebhookChange) async throws -> Webhook {
        var change = change
        if let url = change.url { change.url = try await checked(url) }
        if let events = change.events { change.events = try Self.events(events) }
        if let description = change.description {
            change.description = .some(try description.flatMap(Self.description))
        }
        guard let webhook = try await webhooks.update(id, change: change) else {
            throw ParleyError.notFound("No such webhook.")
        }
        return webhook
    }

    public func delete(id: Int64) async throws {
        guard try await webhooks.delete(id: id) else { throw ParleyError.notFound("No such webhook.") }
    }

    /// Queues a `webhook.ping`; its delivery's id.
    public func ping(id: Int64) async throws -> String {
        let data = WebhookEvent.json(WebhookEvent.WebhookState(webhookId: id))
        guard let delivery = try await webhooks.ping(webhookID: id, data: data) else {
            throw ParleyError.notFound("No such webhook.")
        }
        return delivery
    }

    public func deliveries(webhookID: Int64, status: WebhookDelivery.Status?, before: String?, limit: Int)
        async throws -> [WebhookDelivery]
    {
        guard try await webhooks.webhook(id: webhookID) != nil else { throw ParleyError.notFound("No such webhook.") }
        return try await webhooks.deliveries(webhookID: webhookID, status: status, before: before, limit: limit)
    }

    public func retry(deliveryID: String, webhookID: Int64) async throws {
        guard try await webhooks.retry(deliveryID: deliveryID, webhookID: webhookID) else {
            throw ParleyError.notFound("No such delivery, or it is pending.")
        }
    }

    func checked(_ url: String) async throws -> String {
        let endpoint = try rule.endpoint(url)
        _ = try await rule.target(endpoint, resolver: resolver)
        return endpoint.url.absoluteString
    }

    static func events(_ events: [WebhookEvent.Kind]) throws -> [WebhookEvent.Kind] {
        guard !events.isEmpty else {
            throw ParleyError.invalidRequest("a webhook needs at least one event", field: "events")
        }
        return Array(Set(events)).sorted { $0.rawValue < $1.rawValue }
    }

    static func description(_ text: String) throws -> String? {
        text.isEmpty ? nil : try TextRule.validated(text, field: "description", length: 1...500)
    }
}

/// When a failed delivery is tried again, and when it and its webhook are given up.
public struct WebhookRetryPolicy: Sendable {
    /// The first retry's delay; each next one doubles it, up to ``maximumDelay``.
    public var firstDelay: Duration = .seconds(5)
    public var maximumDelay: Duration = .seconds(3600)
    /// A delivery still failing this long after its first attempt is dead.
    public var deliveryLifetime: Duration = .seconds(24 * 3600)
    /// A webhook whose deliveries have all failed this long is disabled.
    public var webhookFailureLimit: Duration = .seconds(3 * 24 * 3600)

    public init() {}

    /// What follows a failed attempt number `attempt` (1 for the first) made at `now`: a
    /// retry after the doubling delay with ±20 % jitter (so receivers back up together do not
    /// get every retry at once), or death past the lifetime.
    public func afterFailure(
        attempt: Int, firstAttemptAt: Date, failingSince: Date, now: Date,
        jitter: Double = Double.random(in: -0.2...0.2)
    ) -> WebhookDeliveryOutcome {
        let disable = now.timeIntervalSince(failingSince) >= webhookFailureLimit.seconds
        guard now.timeIntervalSince(firstAttemptAt) < deliveryLifetime.seconds, !disable else {
            return .failed(disable: disable)
        }
        let doubled = firstDelay.seconds * pow(2, Double(min(max(attempt - 1, 0), 20)))
        let delay = min(doubled, maximumDelay.seconds) * (1 + jitter)
        return .retry(at: now.addingTimeInterval(delay))
    }
}
