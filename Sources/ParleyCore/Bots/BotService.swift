import Foundation

/// Bots as administrators make, list and delete them, and the MQTT credentials their keys
/// renew. A bot's `webhookUrl` is checked by the outbound rule as a webhook's is.
public struct BotService: Sendable {
    let bots: any BotRepository
    let accounts: AccountService
    let webhooks: WebhookService
    /// The issuer its key names (it names no users by `externalId`: it acts only as the bot).
    let keyIssuer: String

    public init(bots: any BotRepository, accounts: AccountService, webhooks: WebhookService, keyIssuer: String) {
        self.bots = bots
        self.accounts = accounts
        self.webhooks = webhooks
        self.keyIssuer = keyIssuer
    }

    /// The scopes of a bot's key: it reads and writes messages, as the bot.
    public static let keyScopes: [APIKeyScope] = [.messagesRead, .messagesWrite]

    public func create(name: String, webhookUrl: String?, by administratorID: Int64?) async throws -> CreatedBot {
        guard Bot.isValidName(name) else {
            throw ParleyError.invalidRequest("a bot's name matches [a-z0-9_-]{2,32}", field: "name")
        }
        var url: String?
        if let webhookUrl { url = try await webhooks.checked(webhookUrl) }
        let (webhookKey, webhookSecret) = WebhookSignature.generate()
        let secret = APIKeyService.newSecret()
        let (bot, key) = try await bots.create(
            NewBot(
                name: name, webhookURL: url, webhookKey: webhookKey, keySecretHash: secret.hash,
                keyIssuer: keyIssuer, createdBy: administratorID))
        guard let user = try await accounts.users.find(id: bot.id) else { throw ParleyError.notFound("No such bot.") }
        return CreatedBot(
            bot: bot, user: user, apiKey: IssuedAPIKey(key: key, secret: secret.value),
            webhookSecret: url == nil ? nil : webhookSecret, mqtt: try await mqttCredentials(botID: bot.id))
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [Bot] {
        try await bots.list(afterID: afterID, limit: limit)
    }

    /// Its key is revoked and its MQTT clients disconnected at once; its account stays, deactivated,
    /// so what it said keeps its author.
    public func delete(id: Int64) async throws {
        guard try await bots.delete(id: id) else { throw ParleyError.notFound("No such bot.") }
        try await accounts.endSessions(of: id)
    }

    /// The deliveries of the commands sent to it, newest first (none without a `webhookUrl`).
    public func deliveries(botID: Int64, status: WebhookDelivery.Status?, before: String?, limit: Int)
        async throws -> [WebhookDelivery]
    {
        guard try await bots.bot(id: botID) != nil else { throw ParleyError.notFound("No such bot.") }
        guard let webhookID = try await bots.webhookID(botID: botID) else { return [] }
        return try await webhooks.webhooks.deliveries(
            webhookID: webhookID, status: status, before: before, limit: limit)
    }

    /// Fresh MQTT credentials, signed for the bot's session (opened the first time).
    public func mqttCredentials(botID: Int64) async throws -> BotMQTTCredentials {
        let session: (sessionID: Int64, clientID: String)
        if let kept = try await bots.mqttSession(botID: botID) {
            session = kept
        } else {
            guard let user = try await accounts.users.find(id: botID) else { throw ParleyError.unauthorized }
            let opened = try await accounts.openSession(for: user, device: DeviceRegistration(name: "bot"))
            session = (opened.sessionID, opened.clientID)
            try await bots.setMQTTSession(botID: botID, sessionID: session.sessionID, clientID: session.clientID)
        }
        let signed = accounts.mqttPassword(userID: botID, sessionID: session.sessionID, clientID: session.clientID)
        return BotMQTTCredentials(
            userID: botID, clientID: session.clientID, password: signed.password, expiresAt: signed.expiresAt)
    }
}
