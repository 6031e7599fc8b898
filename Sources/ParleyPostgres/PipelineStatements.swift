import Foundation
import ParleyCore
import PostgresNIO

// The message pipeline's statements, prepared once per connection (PostgresNIO keeps them):
// planning them cost more than running them. The membership view alone has three branches
// to plan, and the pipeline asks it twice per message.
//
// Every prepared statement here and in its sibling files names itself once
// (`static let name`): PostgresNIO's default, the same name, is worked out by reflection on
// every execution, 2 % of the worker's CPU at chat rates.

/// A user's highest role in a room, by any path (direct, group, application role).
struct EffectiveRoleStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT max(r.rank) FROM messenger.room_membership m JOIN cloud.role r ON r.id = m.role_id
        WHERE m.chat_room_id = $1::bigint AND m.user_account_id = $2::bigint
        """
    typealias Row = Int?
    let roomID: Int64
    let userID: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(roomID)
        try bindings.append(userID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int?.self) }
}

/// A statement over chunks of rooms' readers: `$1` rooms, `$2` each one's `after`, `$3` the
/// most readers a chunk reads (``ReaderIDsStatement/chunkReaders``).
protocol ReaderChunksStatement: PostgresPreparedStatement {
    var rooms: [Int64] { get }
    var after: [Int64] { get }
    var limit: Int32 { get }
}

extension ReaderChunksStatement {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        try bindings.append(rooms)
        try bindings.append(after)
        try bindings.append(limit)
        return bindings
    }
}

/// The readers of several rooms' chunks at once (a fan-out batch): each chunk's users after
/// its `after`, ascending, at most `limit`, with the room's readers version they were read at.
struct ReaderIDsStatement: ReaderChunksStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        SELECT r.room, r.after, m.user_account_id, c.readers_version
        FROM unnest($1::bigint[], $2::bigint[]) AS r(room, after)
        JOIN messenger.chat_room c ON c.id = r.room
        CROSS JOIN LATERAL \(chunkReaders) m
        ORDER BY r.room, r.after, m.user_account_id
        """
    /// The readers of chunk `r(room, after)`, at most `$3`: the summaries of busy rooms reach
    /// the same users.
    static let chunkReaders = """
        (SELECT DISTINCT user_account_id FROM messenger.room_membership
         WHERE chat_room_id = r.room AND user_account_id > r.after
         ORDER BY user_account_id LIMIT $3::integer)
        """
    typealias Row = (Int64, Int64, Int64, Int64)
    let rooms: [Int64]
    let after: [Int64]
    let limit: Int32

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The relay's next batch, in commit order (only the relay holding the lock reads it), after
/// the rows it published and has not deleted yet (`published`), and the deletion of those
/// rows: one round trip per batch while events keep coming. A new message's row brings the
/// stored message, whose event the relay encodes, with the versions its fan-out may trust kept
/// readers and token holders at; a domain event's row is delivered as
/// ``ParleyCore/DomainEvent/delivery(roomUID:)`` says.
struct OutboxBatchStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = deleting(read)
    /// The batch's read: the rows deleted in the same statement are still visible to it.
    static let read = rows(
        message: MessageColumns.list(fresh: true),
        joins: """
            LEFT JOIN messenger.message m ON m.id = o.message_id
            LEFT JOIN cloud.file f ON f.id = m.file_id
            \(MessageColumns.replyJoin)
            """)

    /// The next batch's rows after the published ones, each with its room's and the fan-out's
    /// versions, then `message`: the new message's columns (from `joins`), or less.
    static func rows(message: String, joins: String = "") -> String {
        """
        SELECT o.id, o.kind, o.topic, c.uid, o.event, o.fanout,
               coalesce(c.readers_version, 0), (SELECT version FROM notifications.push_token_version),
               o.traceparent, \(message)
        FROM messenger.outbox o
        LEFT JOIN messenger.chat_room c ON c.id = o.chat_room_id
        \(joins)
        WHERE o.id <> ALL($2::bigint[])
        ORDER BY o.id LIMIT $1::integer
        """
    }

    /// `read`, deleting the published rows first.
    static func deleting(_ read: String) -> String {
        """
        WITH deleted AS (DELETE FROM messenger.outbox WHERE id = ANY($2::bigint[]))
        \(read)
        """
    }
    let limit: Int32
    let published: [Int64]
    /// Signs the URLs of a new message's file.
    let links: FileLinks

    struct Row {
        let id: Int64
        /// Published in this order: the room's events, then commands for the broker plugin.
        var events: [(topic: String, payload: String)]
        var fanout: [FanoutBatch.Entry]
        /// The trace of the send that stored a new message (``ParleyCore/PipelineTrace``).
        let traceparent: String?
        /// Why the row delivers nothing although it recorded an event: one this server cannot
        /// read (a newer server's), which would otherwise hold every event behind it.
        let unreadable: String?
        /// The event the row recorded, for the webhooks; nil for a row recorded before domain
        /// events (migration 0023).
        var event: DomainEvent? = nil
        /// A new message whose event waits for its receipts (``encode(receipts:)``).
        var newMessage: NewMessage? = nil
        /// A new message's row read without the message (``OutboxRowsStatement``), until
        /// ``receiving(_:)`` gives it the message.
        var awaiting: Awaiting? = nil

        struct NewMessage {
            let message: Message
            let topic: String
            let readersVersion: Int64
            let tokensVersion: Int64
        }

        /// What a new message's row holds besides its message.
        struct Awaiting {
            let messageID: Int64
            let topic: String
            let readersVersion: Int64
            let tokensVersion: Int64
        }

        /// The row with its awaited message, as a read in full would have it.
        func receiving(_ message: Message) -> Row {
            guard let awaiting else { return self }
            var row = self
            row.newMessage = .init(
                message: message, topic: awaiting.topic, readersVersion: awaiting.readersVersion,
                tokensVersion: awaiting.tokensVersion)
            row.awaiting = nil
            return row
        }

        /// The new message's event and fan-out, `receipts` set (nil in a room above the limit):
        /// encoded once, these bytes go to the room topic and to every reader's copy.
        mutating func encode(receipts: MessageReceipts?) {
            guard let pending = newMessage else { return }
            var message = pending.message
            message.receipts = receipts
            let (encoded, job) = EventDelivery.newMessage(
                message, readersVersion: pending.readersVersion, pushTokensVersion: pending.tokensVersion,
                traceparent: traceparent)
            events = [(pending.topic, encoded)]
            fanout = [FanoutBatch.Entry(job, event: encoded)]
            event = .messageCreated(message)
            newMessage = nil
        }
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        try bindings.append(limit)
        try bindings.append(published)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (id, kind, topic, roomUID, event, fanout, readersVersion, tokensVersion, traceparent) = try row.decode(
            (Int64, String?, String?, String?, String?, String?, Int64, Int64, String?).self)
        let columns = row.makeRandomAccess()
        // The message's columns (``MessageColumns``), null when the row is not a new message's.
        guard try columns[9].decode(Int64?.self) != nil else {
            return Self.recorded(id: id, kind: kind, topic: topic, roomUID: roomUID, event: event, fanout: fanout)
        }
        let message = try MessageColumns.decode(columns, from: 9, links: links).message
        return Row(
            id: id, events: [], fanout: [], traceparent: traceparent, unreadable: nil,
            newMessage: .init(
                message: message, topic: topic ?? Topic.room(roomUID ?? ""), readersVersion: readersVersion,
                tokensVersion: tokensVersion))
    }

    /// A row that does not name a stored message: a domain event, or an event recorded before
    /// domain events (migration 0023) as it goes out, or a new message deleted since (its
    /// room's with it): the row's event, if any, as it is.
    static func recorded(
        id: Int64, kind: String?, topic: String?, roomUID: String?, event: String?, fanout: String?
    ) -> Row {
        if let kind { return Self.domainEvent(id: id, kind: kind, payload: event, roomUID: roomUID) }
        let events = event.map { [(topic ?? roomUID.map { Topic.room($0) } ?? BrokerControl.topic, $0)] } ?? []
        return Row(
            id: id, events: events, fanout: fanout.map { [.init(job: $0, event: event)] } ?? [], traceparent: nil,
            unreadable: nil)
    }

    private static func domainEvent(id: Int64, kind: String, payload: String?, roomUID: String?) -> Row {
        guard let name = DomainEvent.Name(rawValue: kind),
            let event = try? DomainEvent(name: name, payload: payload ?? "")
        else {
            return Row(id: id, events: [], fanout: [], traceparent: nil, unreadable: "an event \(kind) not read")
        }
        let delivery = event.delivery(roomUID: roomUID)
        let room = roomUID.map { uid in delivery.roomEvents.map { (Topic.room(uid), $0) } } ?? []
        // Each job's event goes once in the batch, beside the job (``FanoutBatch``).
        return Row(
            id: id, events: room + delivery.controls.map { (BrokerControl.topic, $0.json()) },
            fanout: delivery.fanout.map { FanoutBatch.Entry($0.with(event: ""), event: $0.event) }, traceparent: nil,
            unreadable: nil, event: event)
    }
}

/// The relay's next batch as ``OutboxBatchStatement`` reads it, deleting nothing: the relay
/// deletes what it published every few batches, not with each (see ``OutboxRelay``). A
/// statement without the `DELETE` sets up no deletion and fires no trigger: the outbox's
/// statement trigger, which indexes the published messages' words, runs once for those
/// batches together.
struct OutboxReadStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = OutboxBatchStatement.read
    typealias Row = OutboxBatchStatement.Row
    /// The same bindings: its `published` are skipped, not deleted.
    let batch: OutboxBatchStatement

    func makeBindings() throws -> PostgresBindings { try batch.makeBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try batch.decodeRow(row) }
}

/// Removes the events the relay published.
struct OutboxDeleteStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = "DELETE FROM messenger.outbox WHERE id = ANY($1::bigint[])"
    typealias Row = ()
    let ids: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        try bindings.append(ids)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}
