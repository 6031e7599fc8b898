import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// A message's columns as clients see it, in one place for every query that answers with
/// messages: the row (alias `m`), its room's uid, its file (alias `f`) as JSON, the message it
/// replies to (alias `rt`, ``replyJoin``), its count of replies, and whether it has reactions
/// (read by ``PostgresRoomRepository/withReactions(_:flagged:viewer:on:)``, as `me` depends on
/// who asks).
enum MessageColumns {
    static let count = 21

    /// - Parameters:
    ///   - roomUID: the expression of the room's uid (`c.uid` with ``source``).
    ///   - file: the expression of the file's JSON.
    ///   - fresh: a message just stored, which has neither replies nor reactions yet: their
    ///     lookups are skipped (the pipeline's hot path).
    static func list(roomUID: String = "c.uid", file: String = FileRecord.optionalJSON, fresh: Bool = false)
        -> String
    {
        let counts =
            fresh
            ? "0::bigint, false"
            : """
            (SELECT count(*) FROM messenger.message r WHERE r.reply_to_id = m.id AND r.deleted_at IS NULL),
            EXISTS (SELECT 1 FROM messenger.reaction x WHERE x.message_id = m.id)
            """
        return """
            m.id, m.seq, m.chat_room_id, \(roomUID), m.sent_by_id, m.content, m.uid, m.file_id, m.created_at, \(file),
            m.edited_at, m.deleted_at, m.deleted_by_id, m.mentions, m.reply_to_id, rt.seq, rt.sent_by_id,
            left(rt.content, 100), rt.deleted_at IS NOT NULL, \(counts)
            """
    }

    static let replyJoin = "LEFT JOIN messenger.message rt ON rt.id = m.reply_to_id"

    /// Messages with their room, file and reply target.
    static let source = """
        messenger.message m JOIN messenger.chat_room c ON c.id = m.chat_room_id
        LEFT JOIN cloud.file f ON f.id = m.file_id
        \(replyJoin)
        """

    /// The message in the ``count`` columns from `first`, its file's URLs signed with `links`,
    /// and whether it has reactions to read.
    static func decode(_ row: PostgresRandomAccessRow, from first: Int, links: FileLinks) throws -> (
        message: Message, hasReactions: Bool
    ) {
        func cell<T: PostgresDecodable>(_ offset: Int, _ type: T.Type) throws -> T {
            try row[first + offset].decode(T.self)
        }
        let replyTo = try cell(14, Int64?.self).map { id in
            ReplyPreview(
                id: id, seq: try cell(15, Int64?.self) ?? 0, sentById: try cell(16, Int64?.self),
                excerpt: try cell(17, String?.self) ?? "", deleted: try cell(18, Bool?.self) ?? true)
        }
        let message = Message(
            id: try cell(0, Int64.self), seq: try cell(1, Int64.self), chatRoomId: try cell(2, Int64.self),
            chatRoomUid: try cell(3, String.self), sentById: try cell(4, Int64?.self),
            content: try cell(5, String.self), uid: try cell(6, String.self), fileId: try cell(7, Int64?.self),
            createdAt: try cell(8, Date.self),
            file: try cell(9, String?.self).map { links.object(try FileRecord.decode($0)) },
            editedAt: try cell(10, Date?.self), deletedAt: try cell(11, Date?.self),
            deletedById: try cell(12, Int64?.self), replyTo: replyTo, replyCount: try cell(19, Int64.self),
            mentions: try cell(13, [Int64].self))
        return (message, try cell(20, Bool.self))
    }
}

extension PostgresRoomRepository {
    /// Messages decoded from rows whose columns are ``MessageColumns/list(roomUID:file:fresh:)``
    /// from `first`, with their reactions as `viewer` sees them (`me` nil without one).
    func messages(
        from rows: [PostgresRow], first: Int = 0, viewer: Int64?, on connection: PostgresConnection? = nil
    ) async throws -> [Message] {
        var messages: [Message] = []
        var flagged = Set<Int64>()
        for row in rows {
            let (message, hasReactions) = try MessageColumns.decode(
                row.makeRandomAccess(), from: first, links: fileLinks)
            if hasReactions { flagged.insert(message.id) }
            messages.append(message)
        }
        return try await withReactions(messages, flagged: flagged, viewer: viewer, on: connection)
    }

    /// Fills in the reactions of the messages in `flagged`, keys in the order first used.
    func withReactions(_ messages: [Message], flagged: Set<Int64>, viewer: Int64?, on connection: PostgresConnection?)
        async throws -> [Message]
    {
        guard !flagged.isEmpty else { return messages }
        let query: PostgresQuery = """
            SELECT message_id, key, count(*), coalesce(bool_or(user_account_id = \(viewer)), false)
            FROM messenger.reaction WHERE message_id = ANY(\(Array(flagged)))
            GROUP BY message_id, key ORDER BY message_id, min(created_at), key
            """
        let rows =
            if let connection {
                try await connection.query(query, logger: logger)
            } else {
                try await database.client.query(query, logger: logger)
            }
        var reactions: [Int64: [ReactionSummary]] = [:]
        for try await (messageID, key, count, me) in rows.decode((Int64, String, Int64, Bool).self) {
            reactions[messageID, default: []].append(
                ReactionSummary(key: key, count: count, me: viewer == nil ? nil : me))
        }
        return messages.map { message in
            var message = message
            message.reactions = reactions[message.id] ?? []
            return message
        }
    }
}
