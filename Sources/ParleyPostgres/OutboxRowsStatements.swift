import ParleyCore
import PostgresNIO

// The relay's read when this process handed it the batch's new messages (``LocalRelay``,
// <doc:RelayHandOver>): the outbox rows and their rooms only. The full read's plan joins each
// row's message, file, reply target and attachments, and starting it was about half of the
// relay's PostgreSQL time at low rates.

/// ``OutboxBatchStatement`` without the new messages' columns: each new message's row
/// ``OutboxBatchStatement/Row/awaiting`` its message by id. Deletes the published rows as the
/// full statement does.
struct OutboxRowsStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = OutboxBatchStatement.deleting(read)
    static let read = OutboxBatchStatement.rows(message: "o.message_id")
    typealias Row = OutboxBatchStatement.Row
    /// The same bindings as the full read.
    let batch: OutboxBatchStatement

    func makeBindings() throws -> PostgresBindings { try batch.makeBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (id, kind, topic, roomUID, event, fanout, readersVersion, tokensVersion, traceparent, messageID) =
            try row.decode((Int64, String?, String?, String?, String?, String?, Int64, Int64, String?, Int64?).self)
        guard let messageID else {
            return OutboxBatchStatement.recorded(
                id: id, kind: kind, topic: topic, roomUID: roomUID, event: event, fanout: fanout)
        }
        return Row(
            id: id, events: [], fanout: [], traceparent: traceparent, unreadable: nil,
            awaiting: .init(
                messageID: messageID, topic: topic ?? Topic.room(roomUID ?? ""), readersVersion: readersVersion,
                tokensVersion: tokensVersion))
    }
}

/// ``OutboxRowsStatement`` deleting nothing (as ``OutboxReadStatement`` is to the full read).
struct OutboxRowsReadStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = OutboxRowsStatement.read
    typealias Row = OutboxBatchStatement.Row
    let rows: OutboxRowsStatement

    func makeBindings() throws -> PostgresBindings { try rows.makeBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try rows.decodeRow(row) }
}
