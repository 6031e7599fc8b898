import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// File metadata (`cloud.file`) and who may read it.
public struct PostgresFileRepository: FileRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func create(_ file: NewFile) async throws -> StoredFile {
        let text = try await database.client.query(
            """
            WITH f AS (
                INSERT INTO cloud.file (uploaded_by_id, name, extension, size, mime_type, checksum, protected,
                                        storage_key)
                VALUES (\(file.uploadedById), \(file.name), \(file.fileExtension), \(file.size), \(file.mimeType),
                        \(Data(file.checksum)), \(file.isProtected), \(file.storageKey))
                RETURNING *
            )
            SELECT \(unescaped: FileRecord.json) FROM f
            """, logger: logger
        ).single(String.self)
        return try FileRecord.decode(text)
    }

    public func find(id: Int64) async throws -> StoredFile? {
        let text = try await database.reads.query(
            "SELECT \(unescaped: FileRecord.json) FROM cloud.file f WHERE f.id = \(id)", logger: logger
        ).first(String.self)
        return try text.map(FileRecord.decode)
    }

    /// On the primary: a removal or a deletion just committed ends access (and every signed
    /// link naming the user) at once.
    public func canRead(fileID: Int64, userID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT EXISTS (SELECT 1 FROM cloud.file WHERE id = \(fileID) AND uploaded_by_id = \(userID))
                OR EXISTS (SELECT 1 FROM messenger.message_attachment a
                           JOIN messenger.message m ON m.id = a.message_id
                           JOIN messenger.room_membership rm ON rm.chat_room_id = m.chat_room_id
                           WHERE a.file_id = \(fileID) AND rm.user_account_id = \(userID))
                OR EXISTS (SELECT 1 FROM cloud.user_account u WHERE u.avatar_file_id = \(fileID))
                OR EXISTS (SELECT 1 FROM messenger.chat_room c
                           JOIN messenger.room_membership rm ON rm.chat_room_id = c.id
                           WHERE c.avatar_file_id = \(fileID) AND rm.user_account_id = \(userID))
            """, logger: logger
        ).single(Bool.self)
    }

    public func isDataExport(fileID: Int64) async throws -> Bool {
        try await database.client.query(
            "SELECT EXISTS (SELECT 1 FROM cloud.data_export WHERE file_id = \(fileID))", logger: logger
        ).single(Bool.self)
    }

    public func roomFiles(roomID: Int64, before: Int64?, limit: Int) async throws -> [StoredFile] {
        let rows = try await database.reads.query(
            """
            SELECT \(unescaped: FileRecord.json) FROM cloud.file f
            WHERE f.id IN (SELECT a.file_id FROM messenger.message_attachment a
                           JOIN messenger.message m ON m.id = a.message_id WHERE m.chat_room_id = \(roomID))
              AND (\(before)::bigint IS NULL OR f.id < \(before))
            ORDER BY f.id DESC LIMIT \(limit)
            """, logger: logger)
        return try rows.all(String.self).map(FileRecord.decode)
    }

    public func setMedia(fileID: Int64, _ details: MediaDetails) async throws {
        try await database.client.query(
            """
            UPDATE cloud.file
            SET width = \(details.width), height = \(details.height), duration_ms = \(details.durationMs),
                thumbnail_small_key = \(details.thumbnailSmallKey), thumbnail_large_key = \(details.thumbnailLargeKey)
            WHERE id = \(fileID)
            """, logger: logger)
    }

    /// Not held: a file of a reported message stays while the report is open, whatever
    /// becomes of the message (evidence); avatars and data exports are held while in use.
    static let notHeld = """
        NOT EXISTS (SELECT 1 FROM messenger.report r WHERE f.id = ANY(r.message_file_ids) AND r.resolved_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM cloud.user_account u WHERE u.avatar_file_id = f.id)
        AND NOT EXISTS (SELECT 1 FROM messenger.chat_room c WHERE c.avatar_file_id = f.id)
        AND NOT EXISTS (SELECT 1 FROM cloud.data_export e WHERE e.file_id = f.id)
        """

    public func storedBytes(uploadedBy userID: Int64) async throws -> Int64 {
        try await database.client.query(
            "SELECT coalesce(sum(size), 0)::bigint FROM cloud.file WHERE uploaded_by_id = \(userID)", logger: logger
        ).first(Int64.self) ?? 0
    }

    public func orphans(createdBefore cutoff: Date, publicCreatedBefore publicCutoff: Date, limit: Int)
        async throws -> [StoredFile]
    {
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: FileRecord.json) FROM cloud.file f
            WHERE NOT f.submitted AND f.created_at < (CASE WHEN f.protected THEN \(cutoff) ELSE \(publicCutoff) END)
              AND \(unescaped: Self.notHeld)
            ORDER BY f.created_at LIMIT \(limit)
            """, logger: logger)
        return try await rows.all(String.self).map(FileRecord.decode)
    }

    public func deleteOrphan(id: Int64) async throws -> StoredFile? {
        // A message submitting the file holds its row lock; this waits and then sees `submitted`.
        let text = try await database.client.query(
            """
            WITH f AS (DELETE FROM cloud.file f WHERE id = \(id) AND NOT submitted AND \(unescaped: Self.notHeld) RETURNING *)
            SELECT \(unescaped: FileRecord.json) FROM f
            """, logger: logger
        ).first(String.self)
        return try text.map(FileRecord.decode)
    }
}
