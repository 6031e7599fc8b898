import Logging
import ParleyCore
import PostgresNIO

/// The transactional outbox: events recorded with the change they describe, published by
/// the relay after commit (`messenger.outbox`).
enum Outbox {
    static let channel = "parley_outbox"

    /// - Parameter topic: where `event` goes; the room's topic when nil.
    static func add(
        roomID: Int64, event: String?, fanout: FanoutJob?, topic: String? = nil, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        // The notification is delivered at commit, so the relay wakes only for committed events.
        _ = try await connection.execute(
            OutboxAddStatement(roomID: roomID, event: event, fanout: fanout?.json(), topic: topic), logger: logger)
    }

    /// Several events for the room's topic, in this order, in one statement (one round trip
    /// where a change records many: an erasure's tombstones).
    static func add(roomID: Int64, events: [String], on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        // Identities follow the ordered SELECT, so the relay publishes the events in this order.
        try await connection.query(
            """
            WITH added AS (
                INSERT INTO messenger.outbox (chat_room_id, event)
                SELECT \(roomID), e.event FROM unnest(\(events)::text[]) WITH ORDINALITY AS e(event, place)
                ORDER BY e.place
                RETURNING id
            )
            SELECT pg_notify('\(unescaped: channel)', '') FROM (SELECT 1 FROM added LIMIT 1) once
            """, logger: logger)
    }
}

extension Outbox {
    /// A command for the broker plugin that concerns no room (a block, an account's clients),
    /// published after commit like every event.
    static func control(_ command: BrokerControl, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.execute(
            OutboxAddStatement(roomID: nil, event: command.json(), fanout: nil, topic: BrokerControl.topic),
            logger: logger)
    }

    /// Stops the broker's deliveries of the room to users who lost it (within the relay's
    /// wake-up, well under a second).
    static func roomLost(roomID: Int64, userIDs: [Int64], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        guard !userIDs.isEmpty else { return }
        let uid = try await connection.query(
            "SELECT uid FROM messenger.chat_room WHERE id = \(roomID)", logger: logger
        ).single(String.self)
        try await add(
            roomID: roomID, event: BrokerControl.roomLost(roomUID: uid, userIDs: userIDs).json(), fanout: nil,
            topic: BrokerControl.topic, on: connection, logger: logger)
    }
}
