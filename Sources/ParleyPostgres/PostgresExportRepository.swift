import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Data exports (`cloud.data_export`) and the JSON documents that go into them, built by
/// PostgreSQL itself.
public struct PostgresExportRepository: ExportRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func request(userID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            INSERT INTO cloud.data_export (user_account_id, status) VALUES (\(userID), 'pending')
            ON CONFLICT (user_account_id) DO UPDATE
            SET status = 'pending', requested_at = clock_timestamp(), expires_at = NULL
            WHERE data_export.status <> 'pending'
            RETURNING 1
            """, logger: logger
        ).first(Int32.self) != nil
    }

    public func find(userID: Int64) async throws -> DataExport? {
        let row = try await database.client.query(
            """
            SELECT status, requested_at, file_id, expires_at FROM cloud.data_export
            WHERE user_account_id = \(userID) AND (expires_at IS NULL OR expires_at > now())
            """, logger: logger
        ).first((String, Date, Int64?, Date?).self)
        return row.map { status, requestedAt, fileID, expiresAt in
            DataExport(
                status: DataExport.Status(rawValue: status) ?? .failed, requestedAt: requestedAt, fileID: fileID,
                expiresAt: expiresAt)
        }
    }

    public func documents(userID: Int64) async throws -> [ExportDocument] {
        var documents: [ExportDocument] = []
        for (name, query) in Self.documentQueries(userID: userID) {
            let json = try await database.client.query(query, logger: logger).first(String.self)
            documents.append(ExportDocument(name: name, json: json ?? "null"))
        }
        return documents
    }

    /// One JSON value per document, in the API's field names.
    static func documentQueries(userID: Int64) -> [(String, PostgresQuery)] {
        [
            (
                "profile.json",
                """
                SELECT json_build_object('id', id, 'email', email, 'firstName', first_name, 'lastName', last_name,
                    'isAdmin', is_admin, 'createdAt', created_at, 'lastActivityAt', last_activity_at,
                    'privacy', json_build_object(
                        'readReceipts', CASE WHEN shares_read_receipts THEN 'everyone' ELSE 'nobody' END,
                        'typing', CASE WHEN shares_typing THEN 'on' ELSE 'off' END,
                        'presence', presence_audience))::text
                FROM cloud.user_account WHERE id = \(userID)
                """
            ),
            (
                "devices.json",
                """
                SELECT coalesce(json_agg(json_build_object('id', d.id, 'platform', d.platform, 'name', d.name,
                    'pushProvider', p.provider, 'createdAt', d.created_at, 'lastSeenAt', d.last_seen_at)
                    ORDER BY d.id), '[]')::text
                FROM cloud.device d LEFT JOIN notifications.user_push_token p ON p.device_id = d.id
                WHERE d.user_account_id = \(userID)
                """
            ),
            (
                "rooms.json",
                """
                WITH rooms AS (
                    SELECT chat_room_id AS id FROM messenger.room_membership WHERE user_account_id = \(userID)
                    UNION SELECT chat_room_id FROM messenger.message WHERE sent_by_id = \(userID)
                )
                SELECT coalesce(json_agg(json_build_object('id', c.id, 'uid', c.uid, 'type', c.type, 'name', c.name,
                    'createdAt', c.created_at,
                    'messages', (SELECT coalesce(json_agg(json_build_object('id', m.id, 'seq', m.seq,
                            'content', m.content, 'type', m.type, 'metadata', m.metadata, 'fileId', m.file_id,
                            'attachments', (SELECT coalesce(json_agg(a.file_id ORDER BY a.position), '[]')
                                            FROM messenger.message_attachment a WHERE a.message_id = m.id),
                            'replyToId', m.reply_to_id, 'createdAt', m.created_at, 'editedAt', m.edited_at)
                            ORDER BY m.seq), '[]')
                        FROM messenger.message m
                        WHERE m.chat_room_id = c.id AND m.sent_by_id = \(userID) AND m.deleted_at IS NULL))
                    ORDER BY c.id), '[]')::text
                FROM messenger.chat_room c JOIN rooms ON rooms.id = c.id
                """
            ),
            (
                "reactions.json",
                """
                SELECT coalesce(json_agg(json_build_object('messageId', r.message_id, 'roomId', m.chat_room_id,
                    'key', r.key, 'createdAt', r.created_at) ORDER BY r.created_at), '[]')::text
                FROM messenger.reaction r JOIN messenger.message m ON m.id = r.message_id
                WHERE r.user_account_id = \(userID)
                """
            ),
        ]
    }

    public func files(userID: Int64) async throws -> [StoredFile] {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: FileRecord.json) FROM cloud.file f
            WHERE f.uploaded_by_id = \(userID)
              AND NOT EXISTS (SELECT 1 FROM cloud.data_export e WHERE e.file_id = f.id)
            ORDER BY f.id
            """, logger: logger)
        return try await rows.all(String.self).map(FileRecord.decode)
    }

    public func complete(userID: Int64, fileID: Int64, expiresAt: Date) async throws -> CompletedExport? {
        try await database.client.query(
            """
            UPDATE cloud.data_export e SET status = 'ready', file_id = \(fileID), expires_at = \(expiresAt)
            FROM (SELECT file_id FROM cloud.data_export WHERE user_account_id = \(userID) FOR UPDATE) old
            WHERE e.user_account_id = \(userID) AND e.status = 'pending'
            RETURNING old.file_id
            """, logger: logger
        ).first(Int64?.self).map { CompletedExport(replacedFileID: $0) }
    }

    public func fail(userID: Int64) async throws {
        try await database.client.query(
            "UPDATE cloud.data_export SET status = 'failed' WHERE user_account_id = \(userID) AND status = 'pending'",
            logger: logger)
    }

    public func pending(requestedBefore cutoff: Date, limit: Int) async throws -> [Int64] {
        try await database.client.query(
            """
            SELECT user_account_id FROM cloud.data_export
            WHERE status = 'pending' AND requested_at < \(cutoff) ORDER BY requested_at LIMIT \(limit)
            """, logger: logger
        ).all(Int64.self)
    }

    public func expire(now: Date, limit: Int) async throws -> [Int64] {
        try await database.client.query(
            """
            WITH gone AS (
                DELETE FROM cloud.data_export WHERE user_account_id IN (
                    SELECT user_account_id FROM cloud.data_export
                    WHERE status = 'ready' AND expires_at < \(now) LIMIT \(limit))
                RETURNING file_id
            ), stuck AS (
                UPDATE cloud.data_export SET status = 'failed'
                WHERE status = 'pending' AND requested_at < \(now)::timestamptz - interval '1 day'
            )
            SELECT file_id FROM gone WHERE file_id IS NOT NULL
            """, logger: logger
        ).all(Int64.self)
    }
}
