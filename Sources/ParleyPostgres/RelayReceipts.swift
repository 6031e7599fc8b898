import Foundation
import Logging
import ParleyCore
import PostgresNIO
import Synchronization

/// Which rooms are small enough for their messages' receipts (``ParleyCore/MessageReceipts``),
/// as the relay found them, each at the readers version it was found at: every change of who
/// can read a room moves that version (migration 0010), so an answer holds until the room's
/// next message carries a newer one. A busy room is asked about once, not once per message.
final class SmallRooms: Sendable {
    private let known = Mutex<[Int64: (version: Int64, small: Bool)]>([:])
    /// Rooms kept at most; past it the map starts over.
    let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    func answer(room: Int64, version: Int64) -> Bool? {
        known.withLock { known in known[room].flatMap { $0.version == version ? $0.small : nil } }
    }

    func keep(_ answers: [(room: Int64, version: Int64, small: Bool)]) {
        known.withLock { known in
            if known.count + answers.count > capacity { known.removeAll(keepingCapacity: true) }
            for answer in answers { known[answer.room] = (answer.version, answer.small) }
        }
    }
}

extension OutboxRelay {
    /// The batch's new messages with their receipts set and their events encoded: rooms whose
    /// size is not known at their readers version are asked about in one query.
    func encodingNewMessages(_ rows: [OutboxBatchStatement.Row], on connection: PostgresConnection) async throws
        -> [OutboxBatchStatement.Row]
    {
        var unknown: [Int64: Int64] = [:]
        var small: [Int64: Bool] = [:]
        for row in rows {
            guard let pending = row.newMessage, receiptsMaxMembers > 0 else { continue }
            let room = pending.message.chatRoomId
            if let answer = smallRooms.answer(room: room, version: pending.readersVersion) {
                small[room] = answer
            } else {
                unknown[room] = max(unknown[room] ?? 0, pending.readersVersion)
            }
        }
        if !unknown.isEmpty {
            let rooms = Array(unknown.keys)
            let answers = try await connection.query(
                """
                SELECT r.room, (SELECT count(*) <= \(receiptsMaxMembers) FROM (
                    \(unescaped: ReceiptRooms.members(upTo: receiptsMaxMembers + 1))) members)
                FROM unnest(\(rooms)::bigint[]) AS r(room)
                """, logger: logger
            ).all((Int64, Bool).self)
            for (room, answer) in answers { small[room] = answer }
            smallRooms.keep(answers.map { (room: $0.0, version: unknown[$0.0] ?? 0, small: $0.1) })
        }
        return rows.map { row in
            var row = row
            if let room = row.newMessage?.message.chatRoomId {
                row.encode(receipts: small[room] == true ? MessageReceipts.none : nil)
            }
            return row
        }
    }
}
