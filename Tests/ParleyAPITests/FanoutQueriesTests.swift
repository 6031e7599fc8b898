import Foundation
import ParleyCore
import ParleyPostgres
import Testing

/// The fan-out's set-based reads against real PostgreSQL: one query answers for every room
/// and chunk of a batch.
struct FanoutQueriesTests {
    @Test func readersOfSeveralRoomsAndChunksComeFromOneQuery() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (first, firstUsers) = try await client.roomOfThree()
            let (second, secondUsers) = try await client.roomOfThree()
            let rooms = PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing)
            let firstIDs = firstUsers.map(userID).sorted()
            let secondIDs = secondUsers.map(userID).sorted()
            let chunks: Set = [
                ReaderChunk(roomID: Int64(first), after: 0), ReaderChunk(roomID: Int64(first), after: firstIDs[1]),
                ReaderChunk(roomID: Int64(second), after: 0), ReaderChunk(roomID: Int64(second), after: secondIDs[2]),
                ReaderChunk(roomID: 0, after: 0),
            ]
            let readers = try await rooms.readerIDs(of: chunks, limit: 2).ids
            #expect(readers[ReaderChunk(roomID: Int64(first), after: 0)] == Array(firstIDs.prefix(2)))
            #expect(readers[ReaderChunk(roomID: Int64(first), after: firstIDs[1])] == [firstIDs[2]])
            #expect(readers[ReaderChunk(roomID: Int64(second), after: 0)] == Array(secondIDs.prefix(2)))
            #expect(readers[ReaderChunk(roomID: Int64(second), after: secondIDs[2])] == nil)
            #expect(readers[ReaderChunk(roomID: 0, after: 0)] == nil)
        }
    }

    /// The fan-out keeps readers by the room's readers version: every path by which someone
    /// starts or stops reading a room moves it, and a message does not.
    @Test func everyChangeOfWhoReadsARoomMovesItsReadersVersion() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let rooms = PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing)
            let database = harness.database.client
            let roomID = Int64(room)
            func version() async throws -> Int64 {
                try #require(
                    try await rooms.readerIDs(of: [ReaderChunk(roomID: roomID, after: 0)], limit: 10).versions[roomID])
            }
            var last = try await version()
            func expectMoved(_ change: String) async throws {
                let now = try await version()
                #expect(now > last, "\(change) left the readers version at \(now)")
                last = now
            }

            _ = try await client.json(
                .post, "/v1/rooms/\(room)/messages", token: token(users[0]), body: #"{"content":"x","uid":"v-1"}"#)
            #expect(try await version() == last, "a message moved the readers version")

            let outsider = try await client.signUp()
            let path = "/v1/rooms/\(room)/members/\(userID(outsider))"
            _ = try await client.json(.put, path, token: token(users[0]), body: #"{"role":"reader"}"#)
            try await expectMoved("a member added")
            _ = try await client.json(.put, path, token: token(users[0]), body: #"{"role":"writer"}"#)
            try await expectMoved("a member's role changed")
            _ = try await client.json(.delete, path, token: token(users[0]))
            try await expectMoved("a member removed")

            let group = try await database.query(
                "INSERT INTO cloud.user_group (name) VALUES (\("g-\(UUID().uuidString)")) RETURNING id"
            ).single(Int64.self)
            try await database.query(
                "INSERT INTO messenger.chat_room_to_user_group (chat_room_id, user_group_id, role_id) VALUES (\(roomID), \(group), 1)"
            )
            try await expectMoved("a group linked")
            try await database.query(
                "INSERT INTO cloud.user_account_to_user_group (user_group_id, user_account_id) VALUES (\(group), \(userID(outsider)))"
            )
            try await expectMoved("a user joined a linked group")
            try await database.query("DELETE FROM cloud.user_account_to_user_group WHERE user_group_id = \(group)")
            try await expectMoved("a user left a linked group")

            let appRole = try await database.query(
                """
                INSERT INTO cloud.role (app_id, code, name) SELECT app_id, \("r-\(UUID().uuidString.prefix(8).lowercased())"), 'R'
                FROM cloud.role LIMIT 1 RETURNING id
                """
            ).single(Int32.self)
            try await database.query(
                "INSERT INTO messenger.chat_room_to_app_role (chat_room_id, app_role_id, role_id) VALUES (\(roomID), \(appRole), 1)"
            )
            try await expectMoved("an application role linked")
            try await database.query(
                "INSERT INTO cloud.user_account_to_role (user_account_id, role_id) VALUES (\(userID(outsider)), \(appRole))"
            )
            try await expectMoved("a user given a linked application role")
            try await database.query("DELETE FROM cloud.role WHERE id = \(appRole)")
            try await expectMoved("a linked application role deleted")
            try await database.query("DELETE FROM cloud.user_account WHERE id = \(userID(users[2]))")
            try await expectMoved("a member's account deleted")
        }
    }
}
