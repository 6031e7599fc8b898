import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Messages: the per-room sequence, idempotent sends, history and read markers; their sends'
/// one writer is in `+Send`, edits, deletions and reactions in `+Actions`.
public struct PostgresMessageRepository: MessageRepository, MessageRowReading {
    let database: PostgresPool
    let logger: Logger
    let fileLinks: FileLinks
    let receiptsMaxMembers: Int
    /// Whether a send's answer carries its receipts (the REST API's does; the ingest's answers
    /// reach no client, the relay tells the message).
    let receiptsInAnswers: Bool
    /// Which rooms are small enough for receipts, for the answers to sends.
    let smallRooms = SmallRooms()
    /// The relay in this process, woken directly by the sends stored here while it is active;
    /// nil: every send notifies.
    let localRelay: LocalRelay?

    /// - Parameters:
    ///   - fileLinks: the deployment's file-link key, so that a URL signed by one process
    ///     opens through every other.
    ///   - receiptsMaxMembers: `PARLEY_RECEIPTS_MAX_MEMBERS`.
    ///   - localRelay: the outbox relay of this process, if it runs one.
    public init(
        database: PostgresPool, logger: Logger, fileLinks: FileLinks,
        receiptsMaxMembers: Int = MessageReceipts.defaultMaxMembers, receiptsInAnswers: Bool = true,
        localRelay: LocalRelay? = nil
    ) {
        self.localRelay = localRelay
        self.database = database
        self.logger = logger
        self.fileLinks = fileLinks
        self.receiptsMaxMembers = receiptsMaxMembers
        self.receiptsInAnswers = receiptsInAnswers
    }

    /// What sends answer: the messages they just stored, with their receipts when answers
    /// carry them. Nobody else has a message just stored: in a room small enough for receipts
    /// they are none yet, in a larger one there are none, as the relay's event says
    /// (``SmallRooms``, by each room's readers version as the store read it).
    func answering(_ sent: [SentMessage?], versions: [Int64: Int64]) async throws -> [SentMessage?] {
        guard receiptsInAnswers, receiptsMaxMembers > 0, !versions.isEmpty else { return sent }
        let small = try await smallRooms.small(versions) { rooms in
            try await database.client.query(SmallRooms.query(of: rooms, maxMembers: receiptsMaxMembers), logger: logger)
                .all((Int64, Bool).self)
        }
        return sent.map { answer in
            answer.map { answer in
                var message = answer.message
                message.receipts = small[message.chatRoomId] == true ? MessageReceipts.none : nil
                return SentMessage(message: message, created: answer.created)
            }
        }
    }

    public func sendIfAllowed(batch: [MessageSubmission], minimum: RoomRole) async throws -> [SentMessage?] {
        var sent = [SentMessage?](repeating: nil, count: batch.count)
        // A file is marked submitted in the same transaction as its message, a reply's target
        // and the mentioned users are checked first, and a batch keeps its order within a room:
        // a batch with any of them takes the general path whole.
        guard batch.allSatisfy(\.message.isPlain) else { return sent }
        do {
            // Answered once durable: the sends are acknowledged after this.
            let waking = localRelay.flatMap { $0.isActive ? $0 : nil }
            let statement = StoreNewMessagesStatement(
                batch, minimumRank: Int32(minimum.rank), notifies: waking == nil)
            var versions: [Int64: Int64] = [:]
            do {
                let rows =
                    batch.count == 1
                    ? try await database.committed(StoreOneNewMessageStatement(batch: statement), logger: logger)
                    : try await database.committed(statement, logger: logger)
                for row in rows {
                    let place = try row.decode(Int64.self)
                    let columns = row.makeRandomAccess()
                    let (message, _) = try MessageColumns.decode(columns, from: 1, links: fileLinks)
                    versions[message.chatRoomId] = try columns[MessageStore.readersVersionColumn].decode(Int64.self)
                    sent[Int(place) - 1] = SentMessage(message: message, created: true)
                }
            } catch {
                // It may have committed before the connection failed, or before its answer
                // proved unreadable: the relay looks anyway.
                waking?.committed()
                throw error
            }
            // The relay takes them from here rather than reading them back (<doc:RelayHandOver>).
            waking?.committed(handingOver: sent.compactMap { $0?.message })
            sent = try await answering(sent, versions: versions)
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

    public func messages(roomID: Int64, query: HistoryQuery, viewer: Int64?) async throws -> (
        messages: [Message], hasMore: Bool
    ) {
        // Without a lower bound the page is the newest one below the upper bound, read
        // backwards; with `after` or `since` it reads forwards. Either way the answer ascends.
        let backwards = query.after == nil && query.since == nil
        let rows = try await database.reads.query(
            """
            SELECT \(unescaped: MessageColumns.list()) FROM \(unescaped: MessageColumns.source)
            WHERE m.chat_room_id = \(roomID)
              AND (\(query.before)::bigint IS NULL OR m.seq < \(query.before))
              AND (\(query.after)::bigint IS NULL OR m.seq > \(query.after))
              AND (\(query.since)::timestamptz IS NULL OR m.created_at >= \(query.since))
              AND (\(query.until)::timestamptz IS NULL OR m.created_at < \(query.until))
            ORDER BY m.seq \(unescaped: backwards ? "DESC" : "ASC")
            LIMIT \(query.limit + 1)
            """, logger: logger)
        var messages = try await self.messages(from: rows, viewer: viewer)
        let hasMore = messages.count > query.limit
        messages = Array(messages.prefix(query.limit))
        return (backwards ? messages.reversed() : messages, hasMore)
    }

    public func latestMessages(roomIDs: [Int64], count: Int, viewer: Int64) async throws -> [Int64: [Message]] {
        guard count > 0, !roomIDs.isEmpty else { return [:] }
        let rows = try await database.reads.query(
            """
            SELECT \(unescaped: MessageColumns.list())
            FROM unnest(\(roomIDs)::bigint[]) AS room(id)
            CROSS JOIN LATERAL (
                SELECT * FROM messenger.message WHERE chat_room_id = room.id ORDER BY seq DESC LIMIT \(count)
            ) m
            JOIN messenger.chat_room c ON c.id = m.chat_room_id
            LEFT JOIN cloud.file f ON f.id = m.file_id
            \(unescaped: MessageColumns.replyJoin)
            ORDER BY m.chat_room_id, m.seq
            """, logger: logger)
        var byRoom: [Int64: [Message]] = [:]
        for message in try await messages(from: rows, viewer: viewer) {
            byRoom[message.chatRoomId, default: []].append(message)
        }
        return byRoom
    }

    public func storedKeys(_ keys: Set<MessageKey>) async throws -> Set<MessageKey> {
        let keys = Array(keys)
        let rows = try await database.client.query(
            """
            SELECT k.room_id, k.sender_id, k.uid
            FROM unnest(\(keys.map(\.roomID))::bigint[], \(keys.map(\.senderID))::bigint[], \(keys.map(\.uid))::text[])
                AS k(room_id, sender_id, uid)
            WHERE EXISTS (
                SELECT 1 FROM messenger.message m
                WHERE m.chat_room_id = k.room_id AND m.sent_by_id = k.sender_id AND m.uid = k.uid)
            """, logger: logger)
        var stored = Set<MessageKey>()
        for try await (roomID, senderID, uid) in rows.decode((Int64, Int64, String).self) {
            stored.insert(MessageKey(roomID: roomID, senderID: senderID, uid: uid))
        }
        return stored
    }

    public func replyTargets(ids: Set<Int64>) async throws -> [Int64: ReplyTarget] {
        let rows = try await database.client.query(
            """
            SELECT id, chat_room_id, deleted_at IS NOT NULL FROM messenger.message WHERE id = ANY(\(Array(ids)))
            """, logger: logger)
        var targets: [Int64: ReplyTarget] = [:]
        for try await (id, roomID, deleted) in rows.decode((Int64, Int64, Bool).self) {
            targets[id] = ReplyTarget(roomID: roomID, deleted: deleted)
        }
        return targets
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
            if let (readAt, shared) = try await moveReadMarker(
                roomID: roomID, userID: userID, messageID: messageID, seq: seq, on: connection)
            {
                var events: [DomainEvent] = [
                    .readMarkerMoved(
                        RoomEvent.Read(marker: asked, userID: userID, roomID: roomID, at: readAt), hidden: !shared)
                ]
                // A reader who shares no read state still received what they read: the room hears
                // that much, when it goes beyond what their devices said.
                if !shared, try await receivedBefore(roomID: roomID, userID: userID, on: connection) < seq {
                    events.append(
                        .receiptChanged(
                            RoomEvent.ReceiptChanged(
                                chatRoomId: roomID, userId: userID, readSeq: nil, deliveredSeq: seq)))
                }
                try await Outbox.record(events, on: connection, logger: logger)
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

    /// How far the member's devices said they received the room (0 for not yet).
    private func receivedBefore(roomID: Int64, userID: Int64, on connection: PostgresConnection) async throws -> Int64 {
        try await connection.query(
            """
            SELECT seq FROM messenger.delivery_marker WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)
            """, logger: logger
        ).first(Int64.self) ?? 0
    }

    /// Moves the marker forward only; returns when it moved and whether the reader shares their
    /// read state, nil when it was already there.
    private func moveReadMarker(
        roomID: Int64, userID: Int64, messageID: Int64, seq: Int64, on connection: PostgresConnection
    ) async throws -> (Date, Bool)? {
        try await connection.query(
            """
            INSERT INTO messenger.read_marker (chat_room_id, user_account_id, message_id, seq)
            VALUES (\(roomID), \(userID), \(messageID), \(seq))
            \(unescaped: ReadMarkerMove.forwardOnly)
            RETURNING updated_at,
                (SELECT shares_read_receipts FROM cloud.user_account WHERE id = \(userID))
            """, logger: logger
        ).first((Date, Bool).self)
    }
}
