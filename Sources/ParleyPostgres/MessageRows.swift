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
