import Foundation
import ParleyCore
import PostgresNIO

/// Search through `messenger.message_search` (migration 0020): the query's terms become a
/// tsquery in PostgreSQL (`messenger.search_query`), never SQL or query syntax; the rooms the
/// user reads, an array, bound which rows count; ``MessageSearchShape`` picks how they are read.
extension PostgresRoomRepository: SearchRepository {
    public func searchMessages(terms: [String], userID: Int64, roomID: Int64?, before: Int64?, limit: Int)
        async throws -> [SearchHit]
    {
        try await searchMessages(
            terms: terms, userID: userID, roomID: roomID, before: before, limit: limit, shape: nil)
    }

    /// - Parameter forced: the shape to read with, instead of the one the caller's rooms call for.
    func searchMessages(
        terms: [String], userID: Int64, roomID: Int64?, before: Int64?, limit: Int, shape forced: MessageSearchShape?
    ) async throws -> [SearchHit] {
        let scope = try await database.reads.query(
            """
            SELECT coalesce(array_agg(c.id), '{}'), coalesce(sum(c.last_seq), 0)::bigint,
                   coalesce((SELECT max(id) FROM messenger.message), 0)
            FROM (SELECT DISTINCT chat_room_id FROM messenger.room_membership
                  WHERE user_account_id = \(userID) AND (\(roomID)::bigint IS NULL OR chat_room_id = \(roomID))) r
            JOIN messenger.chat_room c ON c.id = r.chat_room_id
            """, logger: logger
        ).first?.decode(([Int64], Int64, Int64).self)
        guard let (rooms, roomRows, newestID) = scope, !rooms.isEmpty else { return [] }
        let shape = forced ?? .choose(roomRows: roomRows, newestID: newestID)
        let before = before ?? Int64.max
        let window: Int64 =
            if case .newest(let size) = shape { size } else { 0 }
        let rows = try await database.reads.query(
            """
            WITH args AS MATERIALIZED (
                SELECT \(rooms)::bigint[] AS rooms, \(before)::bigint AS before,
                       \(min(before, newestID + 1) - window)::bigint AS window_start, \(limit)::integer AS lim,
                       messenger.search_query(\(terms)) AS query
            ), hits AS (
                -- Messages the relay has not published yet, so not indexed yet: their outbox rows
                -- name them (an edited or deleted one has its row already).
                (SELECT m.id FROM messenger.outbox o JOIN messenger.message m ON m.id = o.message_id
                 WHERE o.chat_room_id = ANY((SELECT rooms FROM args)::bigint[]) AND o.message_id IS NOT NULL
                   AND m.id < (SELECT before FROM args) AND m.deleted_at IS NULL
                   AND NOT EXISTS (SELECT 1 FROM messenger.message_search s WHERE s.message_id = m.id)
                   AND messenger.search_words(m.content) @@ (SELECT query FROM args)
                 ORDER BY m.id DESC LIMIT (SELECT lim FROM args))
                UNION ALL
                SELECT message_id FROM (\(unescaped: Self.indexedHits(shape))) indexed
            )
            SELECT \(unescaped: MessageColumns.list()), c.name, c.type
            FROM \(unescaped: MessageColumns.source)
            WHERE m.id = ANY(ARRAY(SELECT id FROM hits)) AND m.deleted_at IS NULL
            ORDER BY m.id DESC LIMIT \(limit)
            """, logger: logger
        )
        let messages = try await self.messages(from: rows, viewer: userID)
        return try zip(messages, rows).map { message, row in
            let cells = row.makeRandomAccess()
            return SearchHit(
                message: message,
                room: RoomSummary(
                    id: message.chatRoomId, uid: message.chatRoomUid,
                    name: try cells[MessageColumns.count].decode(String?.self),
                    type: RoomView.Kind(rawValue: try cells[MessageColumns.count + 1].decode(String.self))
                        ?? .multiparty))
        }
    }

    /// The newest `lim` indexed messages that match, read as `shape` says, from the `args` row.
    /// `OFFSET 0` keeps PostgreSQL from folding the words' condition into a subquery's scan,
    /// and `+ 0` from reading the rooms' or ids' index: each reads what its shape chose.
    static func indexedHits(_ shape: MessageSearchShape) -> String {
        switch shape {
        case .rooms:
            """
            SELECT s.message_id FROM (
                SELECT message_id, words FROM messenger.message_search
                WHERE chat_room_id = ANY((SELECT rooms FROM args)::bigint[]) AND message_id < (SELECT before FROM args)
                OFFSET 0) s
            WHERE s.words @@ (SELECT query FROM args)
            ORDER BY s.message_id DESC LIMIT (SELECT lim FROM args)
            """
        case .newest:
            // The word index only when the window did not fill the page.
            """
            WITH newest AS MATERIALIZED (
                SELECT s.message_id FROM (
                    SELECT message_id, chat_room_id, words FROM messenger.message_search
                    WHERE message_id < (SELECT before FROM args) AND message_id >= (SELECT window_start FROM args)
                    ORDER BY message_id DESC OFFSET 0) s
                WHERE s.words @@ (SELECT query FROM args) AND s.chat_room_id = ANY((SELECT rooms FROM args)::bigint[])
                ORDER BY s.message_id DESC LIMIT (SELECT lim FROM args)
            )
            SELECT message_id FROM newest
            UNION ALL
            (SELECT s.message_id FROM messenger.message_search s
             WHERE (SELECT count(*) FROM newest) < (SELECT lim FROM args)
               AND s.words @@ (SELECT query FROM args) AND s.message_id + 0 < (SELECT window_start FROM args)
               AND s.chat_room_id + 0 = ANY((SELECT rooms FROM args)::bigint[])
             ORDER BY s.message_id + 0 DESC LIMIT (SELECT lim FROM args))
            """
        }
    }

    public func searchRooms(terms: [String], userID: Int64, page: RoomPage) async throws -> (
        rooms: [RoomView], nextCursor: String?
    ) {
        // A user's rooms are few enough to match without an index.
        let matching = try await database.reads.query(
            """
            SELECT c.id
            FROM (SELECT DISTINCT chat_room_id FROM messenger.room_membership WHERE user_account_id = \(userID)) r
            JOIN messenger.chat_room c ON c.id = r.chat_room_id
            LEFT JOIN cloud.user_account p ON c.type = 'twoparty' AND p.id =
                CASE WHEN c.twoparty_low_user_id = \(userID) THEN c.twoparty_high_user_id
                     ELSE c.twoparty_low_user_id END
            WHERE messenger.search_words(concat_ws(' ', c.name, p.first_name, p.last_name))
                  @@ (SELECT messenger.search_query(\(terms)))
            """, logger: logger
        ).all(Int64.self)
        guard !matching.isEmpty else { return ([], nil) }
        return try await rooms(for: userID, page: page, only: matching)
    }
}
