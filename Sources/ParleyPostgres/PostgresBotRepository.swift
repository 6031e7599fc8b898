import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Bots (`cloud.bot`), with their accounts, keys and command webhooks.
public struct PostgresBotRepository: BotRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    private static let columns = """
        b.user_account_id, b.name, w.url, b.api_key_id, b.created_at
        """
    private typealias Row = (Int64, String, String?, Int64, Date)

    private static func bot(_ row: Row) -> Bot {
        Bot(id: row.0, name: row.1, webhookUrl: row.2, apiKeyId: row.3, createdAt: row.4)
    }

    /// One statement: the account, its key, its webhook and the bot exist together or not at all.
    public func create(_ bot: NewBot) async throws -> (bot: Bot, key: APIKey) {
        do {
            let row = try await database.client.query(
                """
                WITH u AS (
                    INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                    VALUES (\(bot.email), \(bot.name), '', \(NewUser.noPassword)) RETURNING id
                ), k AS (
                    INSERT INTO cloud.api_key (name, scopes, issuer, secret_hash, created_by_id, bot_id)
                    SELECT \("bot " + bot.name), \(BotService.keyScopes.map(\.rawValue)), \(bot.keyIssuer),
                           \(Data(bot.keySecretHash)), \(bot.createdBy), u.id FROM u
                    RETURNING \(unescaped: PostgresAPIKeyRepository.columns)
                ), w AS (
                    INSERT INTO cloud.webhook (url, events, signing_key, bot_id, description)
                    SELECT \(bot.webhookURL), '{}', \(Data(bot.webhookKey)), u.id, \("commands of bot " + bot.name)
                    FROM u WHERE \(bot.webhookURL)::text IS NOT NULL
                    RETURNING id, url
                ), b AS (
                    INSERT INTO cloud.bot (user_account_id, name, webhook_id, api_key_id)
                    SELECT u.id, \(bot.name), (SELECT id FROM w), k.id FROM u, k
                    RETURNING user_account_id, name, api_key_id, created_at
                )
                SELECT b.user_account_id, b.name, (SELECT url FROM w), b.api_key_id, b.created_at, k.*
                FROM b, k
                """, logger: logger
            ).single(
                (
                    Int64, String, String?, Int64, Date, Int64, String, [String], String, Int64?, Int64?, Date, Date?,
                    Date?
                ).self)
            return (
                Self.bot((row.0, row.1, row.2, row.3, row.4)),
                PostgresAPIKeyRepository.key((row.5, row.6, row.7, row.8, row.9, row.10, row.11, row.12, row.13))
            )
        } catch let error as PSQLError where error.isUniqueViolation {
            throw ParleyError(.conflict, "A bot (or an account of its address) has this name.")
        }
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [Bot] {
        try await database.client.query(
            """
            SELECT \(unescaped: Self.columns) FROM cloud.bot b LEFT JOIN cloud.webhook w ON w.id = b.webhook_id
            WHERE b.deleted_at IS NULL AND b.user_account_id > \(afterID ?? 0)
            ORDER BY b.user_account_id LIMIT \(limit)
            """, logger: logger
        ).all(Row.self).map(Self.bot)
    }

    public func bot(id: Int64) async throws -> Bot? {
        try await database.client.query(
            """
            SELECT \(unescaped: Self.columns) FROM cloud.bot b LEFT JOIN cloud.webhook w ON w.id = b.webhook_id
            WHERE b.deleted_at IS NULL AND b.user_account_id = \(id)
            """, logger: logger
        ).first(Row.self).map(Self.bot)
    }

    /// Its account stays (what it said keeps its author), deactivated and with an address that
    /// frees its name for another bot.
    public func delete(id: Int64) async throws -> Bool {
        try await database.client.query(
            """
            WITH b AS (
                UPDATE cloud.bot SET deleted_at = clock_timestamp()
                WHERE user_account_id = \(id) AND deleted_at IS NULL
                RETURNING user_account_id, api_key_id, webhook_id
            ), u AS (
                UPDATE cloud.user_account u
                SET deactivated_at = coalesce(deactivated_at, clock_timestamp()),
                    email = 'deleted-bot-' || u.id || '@bots.invalid'
                FROM b WHERE u.id = b.user_account_id
            ), k AS (
                UPDATE cloud.api_key k SET revoked_at = coalesce(revoked_at, clock_timestamp())
                FROM b WHERE k.id = b.api_key_id
            ), w AS (
                DELETE FROM cloud.webhook w USING b WHERE w.id = b.webhook_id
            )
            SELECT user_account_id FROM b
            """, logger: logger
        ).first(Int64.self) != nil
    }

    public func mqttSession(botID: Int64) async throws -> (sessionID: Int64, clientID: String)? {
        try await database.client.query(
            """
            SELECT b.session_id, b.client_id FROM cloud.bot b
            JOIN cloud.session s ON s.id = b.session_id AND s.revoked_at IS NULL
            JOIN cloud.user_account_mqtt_client_id c ON c.client_id = b.client_id AND c.revoked_at IS NULL
            WHERE b.user_account_id = \(botID) AND b.deleted_at IS NULL
            """, logger: logger
        ).first((Int64, String).self).map { (sessionID: $0.0, clientID: $0.1) }
    }

    public func setMQTTSession(botID: Int64, sessionID: Int64, clientID: String) async throws {
        try await database.client.query(
            """
            UPDATE cloud.bot SET session_id = \(sessionID), client_id = \(clientID)
            WHERE user_account_id = \(botID) AND deleted_at IS NULL
            """, logger: logger)
    }

    public func webhookID(botID: Int64) async throws -> Int64? {
        try await database.client.query(
            "SELECT webhook_id FROM cloud.bot WHERE user_account_id = \(botID) AND deleted_at IS NULL",
            logger: logger
        ).first(Int64?.self) ?? nil
    }

    public func ids() async throws -> Set<Int64> {
        Set(
            try await database.client.query(
                "SELECT user_account_id FROM cloud.bot WHERE deleted_at IS NULL", logger: logger
            ).all(Int64.self))
    }
}
