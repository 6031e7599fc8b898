import Foundation

/// An account that an administrator made for the app's backend to act through: no password,
/// a server key of its own acting only as the bot (``APIKey/botId``), MQTT credentials, and, with
/// a `webhookUrl`, the commands addressed to it (``BotCommand``). It joins rooms as any user
/// does, and reads and writes only those.
public struct Bot: Sendable, Equatable, Codable {
    /// Its user's id.
    public let id: Int64
    public let name: String
    @NullEncoded public var webhookUrl: String?
    public let apiKeyId: Int64
    public let createdAt: Date

    public init(id: Int64, name: String, webhookUrl: String?, apiKeyId: Int64, createdAt: Date) {
        self.id = id
        self.name = name
        self.webhookUrl = webhookUrl
        self.apiKeyId = apiKeyId
        self.createdAt = createdAt
    }

    /// `[a-z0-9_-]{2,32}`: what follows the `/` of a command.
    public static func isValidName(_ name: String) -> Bool {
        (2...32).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D
            }
    }
}

/// The MQTT credentials of a bot: a client id of its own and a password that expires like a
/// user's (``MQTTToken``); the bot's key renews them.
public struct BotMQTTCredentials: Sendable, Equatable {
    public let userID: Int64
    public let clientID: String
    public let password: String
    public let expiresAt: Date
}

/// What `POST /v1/admin/bots` makes: the bot, its user, its key with the secret, its webhook
/// secret (with a `webhookUrl`) and its MQTT credentials; the secrets are never answered again.
public struct CreatedBot: Sendable {
    public let bot: Bot
    public let user: User
    public let apiKey: IssuedAPIKey
    public let webhookSecret: String?
    public let mqtt: BotMQTTCredentials
}
