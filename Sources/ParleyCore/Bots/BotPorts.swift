import Foundation

/// Bots as administrators keep them.
public protocol BotRepository: Sendable {
    /// Makes the bot's account (no password), the bot, its key and, with a webhook, the
    /// webhook its commands go to, in one transaction. A name (or its account's address) taken
    /// by another: `conflict`.
    func create(_ bot: NewBot) async throws -> (bot: Bot, key: APIKey)
    /// Bots not deleted, oldest first, after `afterID`.
    func list(afterID: Int64?, limit: Int) async throws -> [Bot]
    func bot(id: Int64) async throws -> Bot?
    /// Marks the bot deleted, deactivates its account, revokes its key and drops its webhook;
    /// false when there is no such bot.
    func delete(id: Int64) async throws -> Bool
    /// The session and client id its MQTT credentials are signed for, while neither is revoked.
    func mqttSession(botID: Int64) async throws -> (sessionID: Int64, clientID: String)?
    /// Keeps the session its credentials are signed for from now on.
    func setMQTTSession(botID: Int64, sessionID: Int64, clientID: String) async throws
    /// The webhook its commands go to; nil without one.
    func webhookID(botID: Int64) async throws -> Int64?
    /// The user ids of the bots not deleted (``BotRoster``'s).
    func ids() async throws -> Set<Int64>
}

/// A bot as `POST /v1/admin/bots` asks for it, checked.
public struct NewBot: Sendable {
    public let name: String
    /// Where its commands go, and the key they are signed with.
    public let webhookURL: String?
    public let webhookKey: [UInt8]
    public let keySecretHash: [UInt8]
    public let keyIssuer: String
    public let createdBy: Int64?

    /// The address of a bot's account: under `.invalid`, which no mail reaches.
    public var email: String { "\(name)@bots.invalid" }
}

/// Where a bot's answer to a command is said: in the room, as the bot.
public protocol BotReplies: Sendable {
    func post(_ message: NewMessage, as botID: Int64, in roomID: Int64) async throws
}
