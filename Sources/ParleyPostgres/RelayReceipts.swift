import Foundation
import Logging
import ParleyCore
import PostgresNIO
import Synchronization

extension OutboxRelay {
    /// The batch's new messages with their receipts set and their events encoded: rooms whose
    /// size is not known at their readers version are asked about in one query.
    func encodingNewMessages(_ rows: [OutboxBatchStatement.Row], on connection: PostgresConnection) async throws
        -> [OutboxBatchStatement.Row]
    {
        var versions: [Int64: Int64] = [:]
        for row in rows {
            guard let pending = row.newMessage, receiptsMaxMembers > 0 else { continue }
            let room = pending.message.chatRoomId
            versions[room] = max(versions[room] ?? 0, pending.readersVersion)
        }
        let small =
            versions.isEmpty
            ? [:]
            : try await smallRooms.small(versions) { rooms in
                try await connection.query(SmallRooms.query(of: rooms, maxMembers: receiptsMaxMembers), logger: logger)
                    .all((Int64, Bool).self)
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
