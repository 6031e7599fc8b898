import Foundation
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// Tombstones made together (an erasure's step) follow the one deletion rule as a single
/// deletion does, in one transaction: each live message emptied, its file released, its
/// reactions and mentions gone, one `message-deleted` each in `seq` order; a tombstone, or a
/// message of another room, passes untouched.
struct BatchedTombstoneTests {
    @Test func messagesDeletedTogetherBecomeTombstonesWithAnEventEach() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let database = harness.database
            func value<T: PostgresDecodable & Sendable>(_ sql: String, _: T.Type = Int.self) async throws -> T {
                try await database.client.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).single(T.self)
            }
            // A tombstone already, by its sender, before the others.
            let gone = try await client.send("gone", uid: "b-0", to: room, as: writer)
            let path = "/v1/rooms/\(room)/messages/\(gone.id)"
            #expect(try await client.json(.delete, path, token: token(writer)).status == .noContent)
            let plain = try await client.send("plain", uid: "b-1", to: room, as: writer)
            let file = try await AccountDeletionTests().sendWithFile(
                client, harness, room: room, as: writer, uid: "b-2")
            let withFile = try await value(
                "SELECT id FROM messenger.message WHERE file_id = \(file.fileID)", Int64.self)
            let mentioned = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(room)/messages", token: token(writer),
                body: #"{"content":"@reader","uid":"b-3","mentions":[\#(userID(reader))]}"#)
            #expect(mentioned.mentions == [userID(reader)])
            let react = "/v1/rooms/\(room)/messages/\(plain.id)/reactions/%F0%9F%91%8D"
            #expect(try await client.json(.put, react, token: token(admin)).status == .noContent)
            let (otherRoom, others) = try await client.roomOfThree()
            let elsewhere = try await client.send("elsewhere", uid: "b-5", to: otherRoom, as: others[1])
            let lastOutbox = try await value("SELECT coalesce(max(id), 0) FROM messenger.outbox", Int64.self)
            // What the deletion must take away is there before it.
            #expect(try await value("SELECT count(*) FROM messenger.reaction WHERE message_id = \(plain.id)") == 1)
            #expect(try await value("SELECT count(*) FROM messenger.mention WHERE message_id = \(mentioned.id)") == 1)
            #expect(try await value("SELECT submitted FROM cloud.file WHERE id = \(file.fileID)", Bool.self))
            let before = try await value("SELECT clock_timestamp()", Date.self)

            let messages = PostgresMessageRepository(
                database: database, logger: .quiet, fileLinks: APIHarness.fileLinks)
            let live = [mentioned.id, plain.id, withFile]
            try await messages.delete(
                messageIDs: [gone.id, elsewhere.id] + live, roomID: Int64(room), by: userID(admin))

            let history = try await client.history(room, as: admin).messages
            let tombstones = history.filter { live.contains($0.id) }
            #expect(tombstones.count == 3)
            #expect(tombstones.allSatisfy { $0.deletedAt != nil && $0.content.isEmpty && $0.fileId == nil })
            #expect(tombstones.allSatisfy { $0.mentions.isEmpty && $0.reactions.isEmpty })
            let events = try await RecordedEvents.roomEvents(database, after: lastOutbox).compactMap {
                try? JSONCoding.decoder.decode(Envelope<RoomEvent.Deleted>.self, from: Data($0.utf8))
            }.filter { $0.type == "message-deleted" }
            #expect(
                events.map(\.data.id) == history.filter { live.contains($0.id) }.sorted { $0.seq < $1.seq }.map(\.id))
            #expect(events.allSatisfy { $0.data.deletedById == userID(admin) && $0.data.chatRoomId == Int64(room) })
            #expect(try await value("SELECT count(*) FROM messenger.reaction WHERE message_id = \(plain.id)") == 0)
            #expect(try await value("SELECT count(*) FROM messenger.mention WHERE message_id = \(mentioned.id)") == 0)
            #expect(try await value("SELECT submitted FROM cloud.file WHERE id = \(file.fileID)", Bool.self) == false)
            let changed = try await database.client.query(
                """
                SELECT count(*) FROM messenger.message_change
                WHERE message_id = ANY(\(live)) AND changed_at > \(before)
                """, logger: .quiet
            ).single(Int.self)
            #expect(changed == 3)
            let lastDeleted = try await value(
                "SELECT last_deleted_seq FROM messenger.chat_room WHERE id = \(room)", Int64.self)
            #expect(lastDeleted == tombstones.map(\.seq).max())
            // Untouched: the earlier tombstone keeps its deleter, the other room's message its text.
            let goneBy = try await value(
                "SELECT deleted_by_id FROM messenger.message WHERE id = \(gone.id)", Int64.self)
            #expect(goneBy == userID(writer))
            let kept = try await value("SELECT content FROM messenger.message WHERE id = \(elsewhere.id)", String.self)
            #expect(kept == "elsewhere")
        }
    }
}
