import Logging
import ParleyCore
import PostgresNIO

/// The transactional outbox: events recorded with the change they describe, delivered by the
/// relay after commit (`messenger.outbox`, ``OutboxRelay``). A new message's row is the send's
/// own (it names the message: ``SendBatchStatements``); every other event is recorded here.
enum Outbox {
    static let channel = "parley_outbox"

    /// Records `events` in the caller's transaction, in this order (one statement per run of
    /// events of the same room: one round trip where a change records many, an erasure's
    /// tombstones). The relay wakes at commit, so only for committed events.
    static func record(_ events: [DomainEvent], on connection: PostgresConnection, logger: Logger) async throws {
        var rest = events[...]
        while let first = rest.first {
            let run = rest.prefix { $0.roomID == first.roomID }
            rest = rest.dropFirst(run.count)
            _ = try await connection.execute(
                OutboxRecordStatement(
                    roomID: first.roomID, names: run.map(\.name.rawValue), payloads: run.map { $0.payload() }),
                logger: logger)
        }
    }

    static func record(_ event: DomainEvent, on connection: PostgresConnection, logger: Logger) async throws {
        try await record([event], on: connection, logger: logger)
    }
}

/// Records events of one room (or of none) in the outbox, in order, and wakes the relay at
/// commit.
struct OutboxRecordStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    // Identities follow the ordered SELECT, so the relay delivers the events in this order.
    static let sql = """
        WITH added AS (
            INSERT INTO messenger.outbox (chat_room_id, kind, event)
            SELECT $1::bigint, e.kind, e.event
            FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(kind, event, place)
            ORDER BY e.place
            RETURNING id
        )
        SELECT pg_notify('\(Outbox.channel)', '') FROM (SELECT 1 FROM added LIMIT 1) AS once
        """
    typealias Row = ()
    let roomID: Int64?
    let names: [String]
    let payloads: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        try bindings.append(roomID)
        try bindings.append(names)
        try bindings.append(payloads)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}
