import Logging
import ParleyCore
import PostgresNIO

/// The transactional outbox: events recorded with the change they describe, published by
/// the relay after commit (`messenger.outbox`).
enum Outbox {
    static let channel = "parley_outbox"

    static func add(
        roomID: Int64, event: String?, fanout: FanoutJob?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO messenger.outbox (chat_room_id, event, fanout)
            VALUES (\(roomID), \(event), \(fanout?.json()))
            """, logger: logger)
        // Delivered at commit, so the relay wakes only for committed events.
        try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger)
    }
}
