import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Rooms and memberships; messages are ``PostgresMessageRepository``'s.
public struct PostgresRoomRepository: RoomRepository, MessageRowReading {
    let database: PostgresPool
    let logger: Logger
    /// Signs the URLs of attached files in messages and events.
    let fileLinks: FileLinks
    let receiptsMaxMembers: Int

    /// - Parameters:
    ///   - fileLinks: the deployment's file-link key, so that a URL signed by one process
    ///     opens through every other.
    ///   - receiptsMaxMembers: `PARLEY_RECEIPTS_MAX_MEMBERS`.
    public init(
        database: PostgresPool, logger: Logger, fileLinks: FileLinks,
        receiptsMaxMembers: Int = MessageReceipts.defaultMaxMembers
    ) {
        self.database = database
        self.logger = logger
        self.fileLinks = fileLinks
        self.receiptsMaxMembers = receiptsMaxMembers
    }

    /// The writer of a new room's first message, in the room's transaction.
    var messages: PostgresMessageRepository {
        PostgresMessageRepository(
            database: database, logger: logger, fileLinks: fileLinks, receiptsMaxMembers: receiptsMaxMembers)
    }

    public func role(roomID: Int64, userID: Int64) async throws -> RoomRole? {
        try await effectiveRole(roomID: roomID, userID: userID, on: nil)
    }

    public func role(roomUID: String, userID: Int64) async throws -> RoomRole? {
        let rank = try await database.client.query(
            """
            SELECT max(r.rank) FROM messenger.chat_room c
            JOIN messenger.room_membership m ON m.chat_room_id = c.id
            JOIN cloud.role r ON r.id = m.role_id
            WHERE c.uid = \(roomUID) AND m.user_account_id = \(userID)
            """, logger: logger
        ).first(Int?.self)
        return (rank ?? nil).flatMap { RoomRole(rank: $0) }
    }

    public func roomID(uid: String) async throws -> Int64? {
        try await database.client.query("SELECT id FROM messenger.chat_room WHERE uid = \(uid)", logger: logger)
            .first(Int64.self)
    }

    public func roomType(id: Int64) async throws -> RoomView.Kind? {
        try await database.client.query(
            "SELECT type FROM messenger.chat_room WHERE id = \(id) AND deleted_at IS NULL", logger: logger
        ).first(String.self).flatMap(RoomView.Kind.init(rawValue:))
    }

    /// Served by the membership view's three index-backed branches.
    func effectiveRole(roomID: Int64, userID: Int64, on connection: PostgresConnection?) async throws -> RoomRole? {
        let statement = EffectiveRoleStatement(roomID: roomID, userID: userID)
        let rank =
            if let connection {
                try await connection.execute(statement, logger: logger).firstRow()
            } else {
                try await database.client.execute(statement, logger: logger).firstRow()
            }
        return (rank ?? nil).flatMap { RoomRole(rank: $0) }
    }

    public func room(id: Int64, for userID: Int64) async throws -> RoomView? {
        try await roomViews(for: userID, roomID: id, page: RoomPage(limit: 1)).first?.room
    }

    public func rooms(for userID: Int64, page: RoomPage) async throws -> (rooms: [RoomView], nextCursor: String?) {
        try await rooms(for: userID, page: page, only: nil)
    }

    /// A page of the room list, of the rooms in `only` when given.
    func rooms(for userID: Int64, page: RoomPage, only: [Int64]?) async throws -> (
        rooms: [RoomView], nextCursor: String?
    ) {
        // One more than the page, so the last page says it is the last.
        let read = try await roomViews(
            for: userID, roomID: nil, page: RoomPage(limit: page.limit + 1, cursor: page.cursor, since: page.since),
            only: only)
        let rows = read.prefix(page.limit)
        let next =
            read.count > page.limit ? rows.last.map { RoomCursor(activity: $0.activity, id: $0.room.id).encoded } : nil
        return (rows.map(\.room), next)
    }

    /// The rooms a user can read, newest activity first, with role, read state and peer.
    func roomViews(for userID: Int64, roomID: Int64?, page: RoomPage, only: [Int64]? = nil) async throws -> [(
        room: RoomView, activity: Int64
    )] {
        let cursor = try page.cursor.map(RoomCursor.decode)
        let rows = try await database.reads.execute(
            RoomViewsStatement(
                userID: userID, roomID: roomID, since: page.since, cursor: cursor, limit: page.limit, only: only),
            logger: logger)
        return try rows.map { try RoomViewsStatement.room($0, links: fileLinks) }
    }

    public func createMultiparty(
        creatorID: Int64?, name: String, description: String?, members: [Int64: RoomRole], firstMessage: NewMessage?
    ) async throws -> Int64 {
        try await database.transaction(logger: logger) { connection in
            let ids = Array(members.keys)
            let found = try await connection.query(
                "SELECT count(*) FROM cloud.user_account WHERE id = ANY(\(ids)) AND deleted_at IS NULL", logger: logger
            ).first(Int.self)
            guard found == ids.count else {
                throw ParleyError(.notFound, "A member is not an existing user.", field: "members")
            }
            let uid = RoomUID.generate()
            let roomID = try await connection.query(
                """
                INSERT INTO messenger.chat_room (uid, type, name, description, topic, created_by_id)
                VALUES (\(uid), 'multiparty', \(name), \(description), \(Topic.room(uid)), \(creatorID)) RETURNING id
                """, logger: logger
            ).single(Int64.self)
            var everyone = members
            if let creatorID { everyone[creatorID] = .admin }
            for (userID, role) in everyone {
                try await insertDirect(roomID: roomID, userID: userID, role: role, on: connection)
            }
            // No push for being added when the first message's push follows at once.
            try await Outbox.record(
                .roomCreated(
                    RoomCreated(
                        roomId: roomID, byId: creatorID ?? RoomService.appServer, notifiedIds: ids.sorted(),
                        pushed: firstMessage == nil)),
                on: connection, logger: logger)
            if let creatorID, let firstMessage {
                _ = try await messages.store(
                    [
                        MessageSubmission(
                            roomID: roomID, senderID: creatorID, message: firstMessage,
                            traceparent: PipelineTrace.current())
                    ], on: connection
                ).outcomes[0].get()
            }
            return roomID
        }
    }

    public func direct(userID: Int64, peerID: Int64) async throws -> (roomID: Int64, created: Bool) {
        let (low, high) = (min(userID, peerID), max(userID, peerID))
        return try await database.transaction(logger: logger) { connection in
            let exists = try await connection.query(
                "SELECT count(*) FROM cloud.user_account WHERE id = \(peerID) AND deleted_at IS NULL", logger: logger
            ).first(Int.self)
            guard exists == 1 else { throw ParleyError.notFound("No such user.") }
            let uid = RoomUID.generate()
            // The partial unique index makes concurrent callers agree on one room: the
            // loser's insert waits for the winner's commit, then does nothing.
            let inserted = try await connection.query(
                """
                INSERT INTO messenger.chat_room (uid, type, topic, created_by_id, twoparty_low_user_id,
                                                 twoparty_high_user_id)
                VALUES (\(uid), 'twoparty', \(Topic.room(uid)), \(userID), \(low), \(high))
                ON CONFLICT (twoparty_low_user_id, twoparty_high_user_id) WHERE type = 'twoparty' DO NOTHING
                RETURNING id
                """, logger: logger
            ).first(Int64.self)
            if let roomID = inserted {
                try await insertDirect(roomID: roomID, userID: low, role: .writer, on: connection)
                try await insertDirect(roomID: roomID, userID: high, role: .writer, on: connection)
                try await Outbox.record(
                    .roomCreated(RoomCreated(roomId: roomID, byId: userID, notifiedIds: [peerID], pushed: true)),
                    on: connection, logger: logger)
                return (roomID, true)
            }
            let existing = try await connection.query(
                """
                SELECT id FROM messenger.chat_room
                WHERE type = 'twoparty' AND twoparty_low_user_id = \(low) AND twoparty_high_user_id = \(high)
                """, logger: logger
            ).single(Int64.self)
            return (existing, false)
        }
    }

    public func rename(roomID: Int64, name: String, by userID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            let serial = try await touch(roomID: roomID, on: connection, setName: name)
            try await Outbox.record(
                .roomChanged(RoomChanged(roomId: roomID, byId: userID, change: .renamed, serial: serial)),
                on: connection, logger: logger)
        }
    }

    func insertDirect(roomID: Int64, userID: Int64, role: RoomRole, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO messenger.chat_room_to_user_account (chat_room_id, user_account_id, role_id)
            VALUES (\(roomID), \(userID), (\(unescaped: RoleSQL.idOf(role))))
            ON CONFLICT (chat_room_id, user_account_id) DO UPDATE SET role_id = excluded.role_id
            """, logger: logger)
    }

    public func setArchived(roomID: Int64, archived: Bool, by userID: Int64) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            let changed = try await connection.query(
                """
                UPDATE messenger.chat_room
                SET archived_at = CASE WHEN \(archived) THEN clock_timestamp() END, updated_at = clock_timestamp()
                WHERE id = \(roomID) AND (archived_at IS NOT NULL) <> \(archived)
                RETURNING (extract(epoch FROM updated_at) * 1000000)::bigint
                """, logger: logger
            ).first(Int64.self)
            guard let serial = changed else { return false }
            try await Outbox.record(
                .roomChanged(
                    RoomChanged(
                        roomId: roomID, byId: userID, change: archived ? .archived : .unarchived, serial: serial)),
                on: connection, logger: logger)
            return true
        }
    }

    public func setHidden(roomID: Int64, userID: Int64, hidden: Bool) async throws {
        if hidden {
            try await database.client.query(
                """
                INSERT INTO messenger.room_hidden (chat_room_id, user_account_id) VALUES (\(roomID), \(userID))
                ON CONFLICT (user_account_id, chat_room_id) DO UPDATE SET hidden_at = clock_timestamp()
                """, logger: logger)
        } else {
            try await database.client.query(
                "DELETE FROM messenger.room_hidden WHERE chat_room_id = \(roomID) AND user_account_id = \(userID)",
                logger: logger)
        }
    }

    public func describe(roomID: Int64, description: String?, by userID: Int64) async throws {
        try await database.transaction(logger: logger) { connection in
            let serial = try await connection.query(
                """
                UPDATE messenger.chat_room SET description = \(description), updated_at = clock_timestamp()
                WHERE id = \(roomID)
                RETURNING (extract(epoch FROM updated_at) * 1000000)::bigint
                """, logger: logger
            ).first(Int64.self)
            // A room deleted meanwhile has nobody to tell.
            guard let serial else { return }
            try await Outbox.record(
                .roomChanged(RoomChanged(roomId: roomID, byId: userID, change: .described, serial: serial)),
                on: connection, logger: logger)
        }
    }

    /// Marks the room changed (for the light sync) and returns a serial that keeps change
    /// events of the same kind distinct.
    func touch(roomID: Int64, on connection: PostgresConnection, setName name: String? = nil) async throws -> Int64 {
        try await connection.query(
            """
            UPDATE messenger.chat_room SET updated_at = clock_timestamp(), name = coalesce(\(name), name)
            WHERE id = \(roomID)
            RETURNING (extract(epoch FROM updated_at) * 1000000)::bigint
            """, logger: logger
        ).single(Int64.self)
    }
}

/// SQL for the messenger application's room roles.
enum RoleSQL {
    /// A subquery for the `cloud.role` id of a room role, interpolated `unescaped`: the code
    /// comes from a closed enum of lowercase words, never from a client.
    static func idOf(_ role: RoomRole) -> String {
        "SELECT r.id FROM cloud.role r JOIN cloud.app a ON a.id = r.app_id "
            + "WHERE a.code = 'messenger' AND r.code = '\(role.rawValue)'"
    }
}

/// Unguessable room uids (used in topics instead of the primary key).
enum RoomUID {
    static func generate() -> String { String(OpaqueToken.generate().value.prefix(22)) }
}

/// The room list's keyset cursor: activity (microseconds) and id of the last room shown.
struct RoomCursor {
    /// A room's latest activity in microseconds, computed the same way in SELECT and WHERE.
    static let activitySQL = "(extract(epoch FROM coalesce(c.last_message_at, c.created_at)) * 1000000)::bigint"
    let activity: Int64
    let id: Int64

    var encoded: String { Base64URL.encode(Array("\(activity):\(id)".utf8)) }

    static func decode(_ text: String) throws -> RoomCursor {
        guard let bytes = Base64URL.decode(text), let plain = String(bytes: bytes, encoding: .utf8) else {
            throw ParleyError.foreignCursor
        }
        let parts = plain.split(separator: ":")
        guard parts.count == 2, let activity = Int64(parts[0]), let id = Int64(parts[1]) else {
            throw ParleyError.foreignCursor
        }
        return RoomCursor(activity: activity, id: id)
    }
}
