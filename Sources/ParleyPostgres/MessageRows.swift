import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// What reads messages from rows of ``MessageColumns``: the room and the message adapters
/// (history, views, actions, search) read them alike.
protocol MessageRowReading: Sendable {
    var database: PostgresPool { get }
    var logger: Logger { get }
    /// Signs the URLs of attached files.
    var fileLinks: FileLinks { get }
    /// The most members a room may have for its messages' receipts (``ParleyCore/MessageReceipts``).
    var receiptsMaxMembers: Int { get }
}

/// Messages from rows of ``MessageColumns``, with their reactions as a caller sees them.
extension MessageRowReading {
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
        let reacted = try await withReactions(messages, flagged: flagged, viewer: viewer, on: connection)
        return try await withReceipts(reacted, on: connection)
    }

    /// Fills in the receipts of messages in rooms of at most ``receiptsMaxMembers`` members, in
    /// one query for all their rooms (their members read once, bounded); the rest have none.
    func withReceipts(_ messages: [Message], on connection: PostgresConnection?) async throws -> [Message] {
        let rooms = Array(Set(messages.map(\.chatRoomId)))
        guard !rooms.isEmpty, receiptsMaxMembers > 0 else { return messages }
        // Each room's members, at most one past the limit (one row with none for a room
        // without members): a room that shows more is too large for receipts.
        let query: PostgresQuery = """
            SELECT r.room, mm.member, greatest(coalesce(d.seq, 0), coalesce(rm.seq, 0)),
                   CASE WHEN u.shares_read_receipts THEN coalesce(rm.seq, 0) END
            FROM unnest(\(rooms)::bigint[]) AS r(room)
            LEFT JOIN LATERAL (\(unescaped: ReceiptRooms.members(upTo: receiptsMaxMembers + 1))) mm ON true
            LEFT JOIN cloud.user_account u ON u.id = mm.member
            LEFT JOIN messenger.read_marker rm ON rm.chat_room_id = r.room AND rm.user_account_id = mm.member
            LEFT JOIN messenger.delivery_marker d ON d.chat_room_id = r.room AND d.user_account_id = mm.member
            """
        let rows =
            if let connection {
                StatementRows(try await connection.query(query, logger: logger).collect())
            } else {
                try await database.client.query(query, logger: logger)
            }
        var members: [Int64: [RoomMarks.Member]] = [:]
        for try await (room, member, delivered, read) in rows.decode((Int64, Int64?, Int64, Int64?).self) {
            members[room, default: []].append(
                contentsOf: member.map { [.init(userID: $0, delivered: delivered, read: read)] } ?? [])
        }
        members = members.filter { $0.value.count <= receiptsMaxMembers }
        let marks = members.mapValues(RoomMarks.init(members:))
        return messages.map { message in
            var message = message
            message.receipts = marks[message.chatRoomId]?.receipts(of: message)
            return message
        }
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
                StatementRows(try await connection.query(query, logger: logger).collect())
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
