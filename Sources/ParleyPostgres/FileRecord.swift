import Foundation
import ParleyCore

/// A `cloud.file` row as one JSON column, so message queries can carry it beside their own
/// columns (`f` is the table's alias).
enum FileRecord {
    static let json = "\(object)::text"

    /// The row as a JSON object (for aggregates).
    static let object = """
        json_build_object('id', f.id, 'uploadedById', f.uploaded_by_id, 'name', f.name, 'extension', f.extension,
            'size', f.size, 'mimeType', f.mime_type, 'checksum', encode(f.checksum, 'hex'), 'protected', f.protected,
            'submitted', f.submitted, 'storageKey', f.storage_key, 'width', f.width, 'height', f.height,
            'durationMs', f.duration_ms, 'small', f.thumbnail_small_key, 'large', f.thumbnail_large_key,
            'createdAt', extract(epoch FROM f.created_at))
        """

    /// The JSON of a joined file, or SQL NULL when the row has none.
    static let optionalJSON = "CASE WHEN f.id IS NULL THEN NULL ELSE \(json) END"

    struct Row: Decodable {
        let id: Int64
        let uploadedById: Int64
        let name: String
        let `extension`: String
        let size: Int64
        let mimeType: String
        let checksum: String
        let protected: Bool
        let submitted: Bool
        let storageKey: String
        let width: Int?
        let height: Int?
        let durationMs: Int64?
        let small: String?
        let large: String?
        let createdAt: Double
    }

    /// One for the process: messages with files decode a row each.
    private static let decoder = JSONDecoder()

    static func decode(_ text: String) throws -> StoredFile {
        file(try decoder.decode(Row.self, from: Data(text.utf8)))
    }

    /// A JSON array of rows (``attachments``).
    static func decodeAll(_ text: String) throws -> [StoredFile] {
        try decoder.decode([Row].self, from: Data(text.utf8)).map(file)
    }

    /// A message's attached files in order, as a JSON array (`m` is the message's alias); NULL
    /// without a file, where the message's one `file` column says all.
    static let attachments = """
        CASE WHEN m.file_id IS NULL THEN NULL ELSE (
            SELECT json_agg(\(object) ORDER BY a.position)::text
            FROM messenger.message_attachment a JOIN cloud.file f ON f.id = a.file_id WHERE a.message_id = m.id)
        END
        """

    private static func file(_ row: Row) -> StoredFile {
        var checksum: [UInt8] = []
        var index = row.checksum.startIndex
        while index < row.checksum.endIndex {
            let next = row.checksum.index(index, offsetBy: 2)
            checksum.append(UInt8(row.checksum[index..<next], radix: 16) ?? 0)
            index = next
        }
        return StoredFile(
            id: row.id, uploadedById: row.uploadedById, name: row.name, fileExtension: row.extension, size: row.size,
            mimeType: row.mimeType, checksum: checksum, isProtected: row.protected, submitted: row.submitted,
            storageKey: row.storageKey, width: row.width, height: row.height, durationMs: row.durationMs,
            thumbnailSmallKey: row.small, thumbnailLargeKey: row.large,
            createdAt: Date(timeIntervalSince1970: row.createdAt))
    }
}
