import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// A message's columns as clients see it, in one place for every query that answers with
/// messages: the row (alias `m`), its room's uid, its file (alias `f`) as JSON, the message it
/// replies to (alias `rt`, ``replyJoin``), its count of replies, whether it has reactions
/// (read by ``MessageRowReading/withReactions(_:flagged:viewer:on:)``, as `me` depends on
/// who asks), its type, metadata and attached files. Receipts are not among them: a message
/// read gets them from ``MessageRowReading/withReceipts(_:on:)``, a new one's event from the
/// relay (``SmallRooms``).
enum MessageColumns {
    static let count = 24

    /// - Parameters:
    ///   - roomUID: the expression of the room's uid (`c.uid` with ``source``).
    ///   - file: the expression of the file's JSON.
    ///   - attachments: the expression of the attached files' JSON array.
    ///   - fresh: a message just stored, which has neither replies nor reactions yet: their
    ///     lookups are skipped (the pipeline's hot path).
    ///   - plain: a plain text message (``ParleyCore/NewMessage/isPlain``): its reply, metadata
    ///     and attachment columns are NULL, and the query needs no ``replyJoin``.
    static func list(
        roomUID: String = "c.uid", file: String = FileRecord.optionalJSON,
        attachments: String = FileRecord.attachments, fresh: Bool = false, plain: Bool = false
    ) -> String {
        let counts =
            fresh
            ? "0::bigint, false"
            : """
            (SELECT count(*) FROM messenger.message r WHERE r.reply_to_id = m.id AND r.deleted_at IS NULL),
            EXISTS (SELECT 1 FROM messenger.reaction x WHERE x.message_id = m.id)
            """
        return """
            m.id, m.seq, m.chat_room_id, \(roomUID), m.sent_by_id, m.content, m.uid, m.file_id, m.created_at, \(file),
            m.edited_at, m.deleted_at, m.deleted_by_id, m.mentions, \(plain ? noReply : reply), \(counts),
            \(plain ? "'text', NULL::text, NULL::text" : "m.type, m.metadata::text, \(attachments)")
            """
    }

    static let replyJoin = "LEFT JOIN messenger.message rt ON rt.id = m.reply_to_id"
    private static let reply =
        "m.reply_to_id, rt.seq, rt.sent_by_id, left(rt.content, 100), rt.deleted_at IS NOT NULL"
    private static let noReply = "NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::boolean"

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
        let file = try cell(9, String?.self).map { links.object(try FileRecord.decode($0)) }
        let message = Message(
            id: try cell(0, Int64.self), seq: try cell(1, Int64.self), chatRoomId: try cell(2, Int64.self),
            chatRoomUid: try cell(3, String.self), sentById: try cell(4, Int64?.self),
            content: try cell(5, String.self), uid: try cell(6, String.self), fileId: try cell(7, Int64?.self),
            createdAt: try cell(8, Date.self),
            file: file,
            editedAt: try cell(10, Date?.self), deletedAt: try cell(11, Date?.self),
            deletedById: try cell(12, Int64?.self), replyTo: replyTo, replyCount: try cell(19, Int64.self),
            mentions: try cell(13, [Int64].self), type: MessageType(rawValue: try cell(21, String.self)),
            metadata: try cell(22, String?.self).map { try MessageMetadata(json: $0) },
            attachments: try cell(23, String?.self).map { try FileRecord.decodeAll($0).map(links.object) })
        return (message, try cell(20, Bool.self))
    }
}
