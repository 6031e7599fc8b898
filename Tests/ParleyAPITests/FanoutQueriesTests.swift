import Foundation
import ParleyCore
import ParleyPostgres
import Testing

/// The fan-out's set-based reads against real PostgreSQL: one query answers for every room
/// and chunk of a batch.
struct FanoutQueriesTests {
    @Test func readersOfSeveralRoomsAndChunksComeFromOneQuery() async throws {
        let harness = try await AccountsHarness.make()
        try await harness.run { client in
            let (first, firstUsers) = try await client.roomOfThree()
            let (second, secondUsers) = try await client.roomOfThree()
            let rooms = PostgresRoomRepository(database: harness.database, logger: .quiet)
            let firstIDs = firstUsers.map(userID).sorted()
            let secondIDs = secondUsers.map(userID).sorted()
            let chunks: Set = [
                ReaderChunk(roomID: Int64(first), after: 0), ReaderChunk(roomID: Int64(first), after: firstIDs[1]),
                ReaderChunk(roomID: Int64(second), after: 0), ReaderChunk(roomID: Int64(second), after: secondIDs[2]),
                ReaderChunk(roomID: 0, after: 0),
            ]
            let readers = try await rooms.readerIDs(of: chunks, limit: 2)
            #expect(readers[ReaderChunk(roomID: Int64(first), after: 0)] == Array(firstIDs.prefix(2)))
            #expect(readers[ReaderChunk(roomID: Int64(first), after: firstIDs[1])] == [firstIDs[2]])
            #expect(readers[ReaderChunk(roomID: Int64(second), after: 0)] == Array(secondIDs.prefix(2)))
            #expect(readers[ReaderChunk(roomID: Int64(second), after: secondIDs[2])] == nil)
            #expect(readers[ReaderChunk(roomID: 0, after: 0)] == nil)
        }
    }
}
