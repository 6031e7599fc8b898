import Foundation
import ParleyCore
import ParleyPostgres
import ParleyTestSupport

/// The domain events the outbox holds, read as the relay reads them, each with where it goes.
enum RecordedEvents {
    static func read(_ database: PostgresPool, roomID: Int64? = nil, after id: Int64 = 0) async throws -> [(
        event: DomainEvent, delivery: EventDelivery
    )] {
        try await database.client.query(
            """
            SELECT o.kind, o.event, c.uid FROM messenger.outbox o
            LEFT JOIN messenger.chat_room c ON c.id = o.chat_room_id
            WHERE o.kind IS NOT NULL AND o.id > \(id) AND (\(roomID)::bigint IS NULL OR o.chat_room_id = \(roomID))
            ORDER BY o.id
            """, logger: .quiet
        ).all((String, String, String?).self).map { kind, payload, uid in
            guard let name = DomainEvent.Name(rawValue: kind) else { throw HarnessError("no event \(kind)") }
            let event = try DomainEvent(name: name, payload: payload)
            return (event, event.delivery(roomUID: uid))
        }
    }

    /// What goes to room topics, in order.
    static func roomEvents(_ database: PostgresPool, roomID: Int64? = nil, after id: Int64 = 0) async throws
        -> [String]
    {
        try await read(database, roomID: roomID, after: id).flatMap(\.delivery.roomEvents)
    }
}
