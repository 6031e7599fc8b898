import Foundation
import ParleyCore
import PostgresNIO

/// Avatars of users and rooms: a file kept while it is one (the orphan sweep's hold).
extension PostgresRoomRepository: AvatarRepository {
    public func setAvatar(userID: Int64, fileID: Int64?) async throws {
        try await database.client.query(
            """
            UPDATE cloud.user_account SET avatar_file_id = \(fileID), updated_at = clock_timestamp()
            WHERE id = \(userID)
            """, logger: logger)
    }

    public func setAvatar(roomID: Int64, fileID: Int64?, by userID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            let changed = try await connection.query(
                """
                UPDATE messenger.chat_room SET avatar_file_id = \(fileID), updated_at = clock_timestamp()
                WHERE id = \(roomID) AND avatar_file_id IS DISTINCT FROM \(fileID)
                RETURNING (extract(epoch FROM updated_at) * 1000000)::bigint
                """, logger: logger
            ).first(Int64.self)
            guard let serial = changed else { return }
            try await Outbox.record(
                .roomChanged(RoomChanged(roomId: roomID, byId: userID, change: .avatar, serial: serial)),
                on: connection, logger: logger)
        }
    }
}
