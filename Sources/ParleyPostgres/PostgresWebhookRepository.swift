import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Webhooks (`cloud.webhook`), their deliveries and attempts: what administrators keep, and
/// the queue of deliveries the webhooks role works through lane by lane.
public struct PostgresWebhookRepository: WebhookRepository, WebhookDeliveryStore, ExpiringRecords {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    private static let columns = "id, url, events, description, enabled, failing_since, created_at"
    private typealias Row = (Int64, String, [String], String?, Bool, Date?, Date)

    private static func webhook(_ row: Row) -> Webhook {
        Webhook(
            id: row.0, url: row.1, events: row.2.compactMap(WebhookEvent.Kind.init(rawValue:)), description: row.3,
            enabled: row.4, failingSince: row.5, createdAt: row.6)
    }

    public func create(url: String, events: [WebhookEvent.Kind], description: String?, key: [UInt8]) async throws
        -> Webhook
    {
        let row = try await database.client.query(
            """
            INSERT INTO cloud.webhook (url, events, description, signing_key)
            VALUES (\(url), \(events.map(\.rawValue)), \(description), \(Data(key)))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger
        ).single(Row.self)
        return Self.webhook(row)
    }

    public func list(afterID: Int64?, limit: Int) async throws -> [Webhook] {
        try await database.client.query(
            """
            SELECT \(unescaped: Self.columns) FROM cloud.webhook
            WHERE id > coalesce(\(afterID)::bigint, 0) AND bot_id IS NULL ORDER BY id LIMIT \(limit)
            """, logger: logger
        ).all(Row.self).map(Self.webhook)
    }

    public func webhook(id: Int64) async throws -> Webhook? {
        try await database.client.query(
            "SELECT \(unescaped: Self.columns) FROM cloud.webhook WHERE id = \(id) AND bot_id IS NULL", logger: logger
        ).first(Row.self).map(Self.webhook)
    }

    public func update(_ id: Int64, change: WebhookChange) async throws -> Webhook? {
        let description = change.description ?? nil
        return try await database.client.query(
            """
            UPDATE cloud.webhook SET
                url = coalesce(\(change.url), url),
                events = coalesce(\(change.events?.map(\.rawValue))::text[], events),
                description = CASE WHEN \(change.description != nil) THEN \(description) ELSE description END,
                enabled = coalesce(\(change.enabled), enabled),
                failing_since = CASE WHEN \(change.enabled == true) THEN NULL ELSE failing_since END
            WHERE id = \(id) AND bot_id IS NULL
            RETURNING \(unescaped: Self.columns)
            """, logger: logger
        ).first(Row.self).map(Self.webhook)
    }

    public func delete(id: Int64) async throws -> Bool {
        try await database.client.query(
            "DELETE FROM cloud.webhook WHERE id = \(id) AND bot_id IS NULL RETURNING id", logger: logger
        ).first(Int64.self) != nil
    }

    public func deliveries(webhookID: Int64, status: WebhookDelivery.Status?, before: String?, limit: Int)
        async throws -> [WebhookDelivery]
    {
        let beforeSeq = before.flatMap { Int64($0) }
        let rows = try await database.client.query(
            """
            SELECT d.id, d.seq, d.type, d.status, d.created_at,
                   CASE WHEN d.status = 'pending' THEN d.next_attempt_at END,
                   coalesce(json_agg(json_build_object(
                       'at', to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                       'statusCode', a.status_code, 'error', a.error, 'durationMs', a.duration_ms) ORDER BY a.id)
                       FILTER (WHERE a.id IS NOT NULL), '[]')::text
            FROM cloud.webhook_delivery d
            LEFT JOIN cloud.webhook_attempt a ON a.delivery_id = d.id
            WHERE d.webhook_id = \(webhookID) AND (\(status?.rawValue)::text IS NULL OR d.status = \(status?.rawValue))
              AND d.seq < coalesce(\(beforeSeq)::bigint, 9223372036854775807)
            GROUP BY d.id ORDER BY d.seq DESC LIMIT \(limit)
            """, logger: logger
        ).all((String, Int64, String, String, Date, Date?, String).self)
        return try rows.map { id, seq, type, status, created, next, attempts in
            WebhookDelivery(
                id: id, webhookId: webhookID, type: type,
                status: WebhookDelivery.Status(rawValue: status) ?? .pending, createdAt: created, nextAttemptAt: next,
                attempts: try JSONCoding.decoder.decode([WebhookDelivery.Attempt].self, from: Data(attempts.utf8)),
                cursor: String(seq))
        }
    }

    public func retry(deliveryID: String, webhookID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            UPDATE cloud.webhook_delivery
            SET status = 'pending', next_attempt_at = clock_timestamp(), leased_until = NULL,
                first_attempt_at = NULL
            WHERE id = \(deliveryID) AND webhook_id = \(webhookID) AND status <> 'pending'
            RETURNING id
            """, logger: logger
        ).first(String.self) != nil
    }

    public func ping(webhookID: Int64, data: String) async throws -> String? {
        let event = QueuedWebhookEvent(
            id: "ping_\(UUID().uuidString.lowercased())", type: .webhookPing, roomId: nil, timestamp: Date(),
            data: data)
        return try await database.client.query(
            """
            INSERT INTO cloud.webhook_delivery (id, webhook_id, lane, type, body)
            SELECT \(Self.deliveryID(event.id, webhookID)), id, 0, \(event.type.rawValue), \(event.body)
            FROM cloud.webhook WHERE id = \(webhookID) AND bot_id IS NULL
            RETURNING id
            """, logger: logger
        ).first(String.self)
    }

    static func deliveryID(_ eventID: String, _ webhookID: Int64) -> String { "msg_\(eventID)_\(webhookID)" }

    // MARK: Deliveries

    public func subscriptions() async throws -> WebhookSubscriptions {
        let (kinds, bots) = try await database.client.query(
            """
            SELECT coalesce(array_agg(DISTINCT e) FILTER (WHERE w.bot_id IS NULL), '{}'),
                   count(*) FILTER (WHERE w.bot_id IS NOT NULL) > 0
            FROM cloud.webhook w LEFT JOIN LATERAL unnest(w.events) e ON true
            WHERE w.enabled
            """, logger: logger
        ).single(([String], Bool).self)
        return WebhookSubscriptions(kinds: Set(kinds.compactMap(WebhookEvent.Kind.init(rawValue:))), botCommands: bots)
    }

    /// The body is `{type: "command", timestamp, data: {command, args, message, room}}`.
    public func record(commands: [BotCommand], at timestamp: Date) async throws {
        guard !commands.isEmpty else { return }
        let stamp = JSONCoding.timestamp(timestamp)
        try await database.client.query(
            """
            INSERT INTO cloud.webhook_delivery (id, webhook_id, lane, type, body)
            SELECT 'cmd_' || c.id || '_' || w.id, w.id, c.room, 'command',
                   json_build_object('type', 'command', 'timestamp', \(stamp)::text, 'data', json_build_object(
                       'command', '/' || b.name, 'args', c.args, 'message', c.message::json,
                       'room', json_build_object('id', r.id, 'type', r.type, 'name', r.name)))::text
            FROM unnest(\(commands.map(\.eventID)), \(commands.map(\.roomID)), \(commands.map(\.senderID)),
                        \(commands.map(\.botName)), \(commands.map(\.args)), \(commands.map(\.message)))
                 WITH ORDINALITY AS c(id, room, sender, name, args, message, n)
            JOIN cloud.bot b ON b.name = c.name AND b.deleted_at IS NULL AND b.user_account_id <> c.sender
            JOIN cloud.webhook w ON w.id = b.webhook_id AND w.enabled
            JOIN messenger.chat_room r ON r.id = c.room
            WHERE EXISTS (
                SELECT 1 FROM messenger.room_membership m
                WHERE m.chat_room_id = c.room AND m.user_account_id = b.user_account_id)
            ORDER BY c.n
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    public func record(_ events: [QueuedWebhookEvent]) async throws {
        guard !events.isEmpty else { return }
        // In the events' order, so that `seq` keeps each room's order.
        try await database.client.query(
            """
            INSERT INTO cloud.webhook_delivery (id, webhook_id, lane, type, body)
            SELECT 'msg_' || e.id || '_' || w.id, w.id, e.lane, e.type, e.body
            FROM unnest(\(events.map(\.id)), \(events.map(\.type.rawValue)), \(events.map { $0.roomId ?? 0 }),
                        \(events.map(\.body))) WITH ORDINALITY AS e(id, type, lane, body, n)
            JOIN cloud.webhook w ON w.enabled AND e.type = ANY(w.events)
            ORDER BY e.n, w.id
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    /// The due heads of pending lanes and what follows them, leased (``ClaimDueWebhooksStatement``).
    public func claimDue(lanes: Int, perLane: Int, lease: Duration) async throws -> [[DueWebhookDelivery]] {
        let rows = try await database.client.execute(
            ClaimDueWebhooksStatement(
                lanes: Int64(lanes), perLane: Int64(perLane), leaseSeconds: Double(lease.components.seconds)),
            logger: logger)
        var byLane: [String: [(seq: Int64, delivery: DueWebhookDelivery)]] = [:]
        for try await (id, webhook, url, key, body, first, attempts, failing, bot, lane, seq) in rows {
            var due = DueWebhookDelivery(
                id: id, webhookID: webhook, url: url, key: Array(key), body: body, firstAttemptAt: first,
                attempts: Int(attempts), failingSince: failing)
            due.botID = bot
            due.roomID = lane
            byLane["\(webhook)/\(lane)", default: []].append((seq, due))
        }
        return byLane.values.map { $0.sorted { $0.seq < $1.seq }.map(\.delivery) }
    }

    public func release(_ deliveryIDs: [String]) async throws {
        guard !deliveryIDs.isEmpty else { return }
        try await database.client.query(
            """
            UPDATE cloud.webhook_delivery SET leased_until = NULL
            WHERE id = ANY(\(deliveryIDs)) AND status = 'pending'
            """, logger: logger)
    }

    public func finish(
        _ delivery: DueWebhookDelivery, attempt: WebhookDelivery.Attempt, next: WebhookDeliveryOutcome
    ) async throws -> Webhook? {
        let (status, nextAt, disable): (String, Date?, Bool) =
            switch next {
            case .succeeded: ("succeeded", nil, false)
            case .retry(let at): ("pending", at, false)
            case .failed(let disable): ("failed", nil, disable)
            }
        let succeeded = next == .succeeded
        return try await database.transaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO cloud.webhook_attempt (delivery_id, at, status_code, error, duration_ms)
                VALUES (\(delivery.id), \(attempt.at), \(attempt.statusCode.map(Int32.init)), \(attempt.error),
                        \(Int32(clamping: attempt.durationMs)))
                """, logger: logger)
            try await connection.query(
                """
                UPDATE cloud.webhook_delivery
                SET status = \(status), attempts = attempts + 1, leased_until = NULL,
                    first_attempt_at = coalesce(first_attempt_at, \(attempt.at)),
                    next_attempt_at = coalesce(\(nextAt), next_attempt_at)
                WHERE id = \(delivery.id)
                """, logger: logger)
            // Written only when it changes: every lane's every success rewrote the webhook's
            // row, so a webhook's lanes took turns on its lock until each commit (the chaos
            // run's one webhook fell over a minute behind 500 messages a second; Webhooks).
            let row = try await connection.query(
                """
                UPDATE cloud.webhook
                SET failing_since = CASE WHEN \(succeeded) THEN NULL ELSE coalesce(failing_since, \(attempt.at)) END,
                    enabled = enabled AND NOT \(disable)
                WHERE id = \(delivery.webhookID)
                  AND (\(disable) OR (failing_since IS NULL) <> \(succeeded))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger
            ).first(Row.self)
            guard disable, let row else { return nil }
            return Self.webhook(row)
        }
    }

    /// Finished deliveries (succeeded or dead) made before `cutoff`, with their attempts.
    public func purge(before cutoff: Date, limit: Int) async throws -> Int {
        let purged = try await database.client.query(
            """
            WITH gone AS (
                DELETE FROM cloud.webhook_delivery WHERE id IN (
                    SELECT id FROM cloud.webhook_delivery
                    WHERE status <> 'pending' AND created_at < \(cutoff)
                    ORDER BY created_at LIMIT \(limit))
                RETURNING 1)
            SELECT count(*)::bigint FROM gone
            """, logger: logger
        ).single(Int64.self)
        return Int(purged)
    }
}
