import Foundation
import ParleyCore
import PostgresNIO

/// Messages: the per-room sequence, idempotent sends, history and read markers.
extension PostgresRoomRepository {
    /// Columns of a message row; queries join `messenger.chat_room c` and, for the file
    /// object, `cloud.file f` (``messageSource``).
    static let messageColumns =
        "m.id, m.seq, m.chat_room_id, c.uid, m.sent_by_id, m.content, m.uid, m.file_id, m.created_at, "
        + FileRecord.optionalJSON
    static let messageSource = """
        messenger.message m JOIN messenger.chat_room c ON c.id = m.chat_room_id
        LEFT JOIN cloud.file f ON f.id = m.file_id
        """
    typealias MessageRow = (Int64, Int64, Int64, String, Int64?, String, String, Int64?, Date, String?)

    /// Stores one message in a transaction of its own (a batch of one, or a batch's sends
    /// one by one after the batch failed).
    func sendAlone(_ submission: MessageSubmission) async throws -> SentMessage {
        func attempt() async throws -> SentMessage {
            try await database.transaction(logger: logger) { connection in
                let (message, created) = try await insertMessage(
                    roomID: submission.roomID, senderID: submission.senderID, message: submission.message,
                    on: connection)
                return SentMessage(message: message, created: created)
            }
        }
        do {
            return try await attempt()
        } catch let error as PSQLError where error.isUniqueViolation {
            // The same uid committed by a concurrent send while this one waited for the room:
            // now it is there to be found.
            return try await attempt()
        }
    }

    public func sendIfAllowed(batch: [MessageSubmission], minimum: RoomRole) async throws -> [SentMessage?] {
        var sent = [SentMessage?](repeating: nil, count: batch.count)
        // A file is marked submitted in the same transaction as its message, and a batch keeps
        // its order within a room: a batch with a file takes the general path whole.
        guard batch.allSatisfy({ $0.message.fileId == nil }) else { return sent }
        do {
            let rows = try await database.client.execute(
                StoreNewMessagesStatement(batch, minimumRank: Int32(minimum.rank)), logger: logger
            ).allRows()
            for row in rows {
                let stored = (row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10)
                sent[Int(row.0) - 1] = SentMessage(message: try message(stored), created: true)
            }
        } catch let error as PSQLError where error.isUniqueViolation {
            // A send of a key in the batch committed meanwhile: the general path finds it.
        } catch let error as any DependencyError where error.isUnavailability {
            throw error
        } catch {
            // Nothing was stored; the general path answers every send, at six round trips a
            // batch instead of one: worth a line in the log.
            logger.warning(
                "a batch's one-statement store failed; storing it on the general path",
                metadata: ["count": "\(batch.count)", "error": "\(String(reflecting: error))"])
        }
        return sent
    }

    /// Stores a message once per (room, sender, uid) with the next `seq`, moves the sender's
    /// read marker to it and records it in the outbox, in one statement (the pipeline's hot
    /// path: each round trip here is one more per message).
    ///
    /// Updating the room row locks it: senders to one room queue on it, so `seq` is handed
    /// out in commit order with no gap. A retried uid skips the update and finds the stored
    /// message; two sends of one uid racing end in a unique violation for the later one,
    /// which ``sendAlone(_:)`` answers by finding the first.
    func insertMessage(roomID: Int64, senderID: Int64, message: NewMessage, on connection: PostgresConnection)
        async throws -> (message: Message, created: Bool)
    {
        if let fileID = message.fileId {
            let own = try await connection.query(
                """
                UPDATE cloud.file SET submitted = true
                WHERE id = \(fileID) AND uploaded_by_id = \(senderID) RETURNING id
                """, logger: logger
            ).first(Int64.self)
            guard own != nil else {
                throw ParleyError(.fileUnavailable, "The file is not one of the sender's uploads.", field: "fileId")
            }
        }
        let inserted = try await connection.execute(
            InsertMessageStatement(MessageSubmission(roomID: roomID, senderID: senderID, message: message)),
            logger: logger
        ).firstRow()
        guard let inserted else {
            let existing = try await connection.query(
                """
                SELECT \(unescaped: Self.messageColumns) FROM \(unescaped: Self.messageSource)
                WHERE m.chat_room_id = \(roomID) AND m.sent_by_id = \(senderID) AND m.uid = \(message.uid)
                """, logger: logger
            ).first(MessageRow.self)
            guard let existing else { throw ParleyError.notFound("No such room.") }
            return (try self.message(existing), false)
        }
        return (try self.message(inserted), true)
    }

    public func messages(roomID: Int64, query: HistoryQuery) async throws -> (messages: [Message], hasMore: Bool) {
        // Without a lower bound the page is the newest one below the upper bound, read
        // backwards; with `after` or `since` it reads forwards. Either way the answer ascends.
        let backwards = query.after == nil && query.since == nil
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM \(unescaped: Self.messageSource)
            WHERE m.chat_room_id = \(roomID)
              AND (\(query.before)::bigint IS NULL OR m.seq < \(query.before))
              AND (\(query.after)::bigint IS NULL OR m.seq > \(query.after))
              AND (\(query.since)::timestamptz IS NULL OR m.created_at >= \(query.since))
              AND (\(query.until)::timestamptz IS NULL OR m.created_at < \(query.until))
            ORDER BY m.seq \(unescaped: backwards ? "DESC" : "ASC")
            LIMIT \(query.limit + 1)
            """, logger: logger)
        var messages = try await rows.decode(MessageRow.self).reduce(into: [Message]()) {
            $0.append(try self.message($1))
        }
        let hasMore = messages.count > query.limit
        messages = Array(messages.prefix(query.limit))
        return (backwards ? messages.reversed() : messages, hasMore)
    }

    public func latestMessages(roomIDs: [Int64], count: Int) async throws -> [Int64: [Message]] {
        guard count > 0, !roomIDs.isEmpty else { return [:] }
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: Self.messageColumns)
            FROM unnest(\(roomIDs)::bigint[]) AS room(id)
            CROSS JOIN LATERAL (
                SELECT * FROM messenger.message WHERE chat_room_id = room.id ORDER BY seq DESC LIMIT \(count)
            ) m
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            LEFT JOIN cloud.file f ON f.id = m.file_id
            ORDER BY m.chat_room_id, m.seq
            """, logger: logger)
        var byRoom: [Int64: [Message]] = [:]
        for try await row in rows.decode(MessageRow.self) { byRoom[row.2, default: []].append(try self.message(row)) }
        return byRoom
    }

    public func markRead(roomID: Int64, userID: Int64, target: ReadMarker.Target) async throws -> ReadMarker {
        try await database.transaction(logger: logger) { connection in
            let query: PostgresQuery =
                switch target {
                case .message(let id):
                    "SELECT id, seq FROM messenger.message WHERE id = \(id) AND chat_room_id = \(roomID)"
                case .seq(let seq):
                    "SELECT id, seq FROM messenger.message WHERE chat_room_id = \(roomID) AND seq = \(seq)"
                }
            guard let (messageID, seq) = try await connection.query(query, logger: logger).first((Int64, Int64).self)
            else { throw ParleyError(.notFound, "No such message in this room.", field: target.field) }
            let asked = ReadMarker(messageId: messageID, seq: seq)
            if let readAt = try await moveReadMarker(
                roomID: roomID, userID: userID, messageID: messageID, seq: seq, on: connection)
            {
                let event = RoomEvent.read(marker: asked, userID: userID, roomID: roomID, at: readAt)
                try await Outbox.add(roomID: roomID, event: event.json(), fanout: nil, on: connection, logger: logger)
                return asked
            }
            // Already at or past it: where it stands.
            let current = try await connection.query(
                """
                SELECT message_id, seq FROM messenger.read_marker
                WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
                """, logger: logger
            ).first((Int64, Int64).self)
            return current.map { ReadMarker(messageId: $0.0, seq: $0.1) } ?? asked
        }
    }

    /// Moves the marker forward only; returns when it moved, nil when it was already there.
    @discardableResult
    private func moveReadMarker(
        roomID: Int64, userID: Int64, messageID: Int64, seq: Int64, on connection: PostgresConnection
    ) async throws -> Date? {
        try await connection.query(
            """
            INSERT INTO messenger.read_marker (chat_room_id, user_account_id, message_id, seq)
            VALUES (\(roomID), \(userID), \(messageID), \(seq))
            ON CONFLICT (chat_room_id, user_account_id) DO UPDATE
            SET message_id = excluded.message_id, seq = excluded.seq, updated_at = clock_timestamp()
            WHERE messenger.read_marker.seq < excluded.seq
            RETURNING updated_at
            """, logger: logger
        ).first(Date.self)
    }
}

extension PostgresRoomRepository {
    func message(_ row: MessageRow) throws -> Message { try Self.message(row, links: fileLinks) }

    /// A message row as clients see it, its file's URLs signed with `links`.
    static func message(_ row: MessageRow, links: FileLinks) throws -> Message {
        Message(
            id: row.0, seq: row.1, chatRoomId: row.2, chatRoomUid: row.3, sentById: row.4, content: row.5, uid: row.6,
            fileId: row.7, createdAt: row.8, file: try row.9.map { links.object(try FileRecord.decode($0)) })
    }
}
