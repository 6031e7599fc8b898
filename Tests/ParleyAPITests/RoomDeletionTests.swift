import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// `DELETE /v1/rooms/{id}` and a room's retention, over REST on real PostgreSQL.
struct RoomDeletionTests {
    let files = FileRoutesTests()

    func count(_ harness: APIHarness, _ sql: String) async throws -> Int {
        try await harness.database.client.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).single(Int.self)
    }

    @Test func anAdminDeletesAMultipartyRoomForEveryoneAndTheJobErasesIt() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer) = (users[0], users[1])
            let attached = try await AccountDeletionTests().sendWithFile(
                client, harness, room: room, as: writer, uid: "f-1")
            #expect(try await client.json(.delete, "/v1/rooms/\(room)", token: token(writer)).status == .forbidden)
            let outsider = try await client.signUp()
            #expect(try await client.json(.delete, "/v1/rooms/\(room)", token: token(outsider)).status == .notFound)
            let pair = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(writer))", token: token(admin))
            #expect(try await client.json(.delete, "/v1/rooms/\(pair.id)", token: token(admin)).status == .forbidden)

            #expect(try await client.json(.delete, "/v1/rooms/\(room)", token: token(admin)).status == .accepted)
            // At once: gone for every member, from their lists too.
            for user in users {
                #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(user)).status == .notFound)
                let list = try await client.decoded(RoomsResponse.self, .get, "/v1/rooms", token: token(user))
                #expect(!list.rooms.contains { $0.id == Int64(room) })
            }
            #expect(try await client.json(.delete, "/v1/rooms/\(room)", token: token(admin)).status == .notFound)
            // The `deleted` change, on the room topic and to each member's own topic; and the
            // broker told to drop its cached decisions for the room.
            let recorded = try await RecordedEvents.read(harness.database, roomID: Int64(room)).map(\.delivery)
            let deleted = try #require(
                recorded.first { $0.roomEvents.contains { $0.contains(#""change":"deleted""#) } })
            #expect(deleted.fanout.map(\.audience) == [.users])
            #expect(recorded.contains { $0.controls.contains { !$0.invalidate.isEmpty } })

            // The job waits for the relay to publish the room's last events.
            let job = try #require(harness.maintenanceJobs.take().first)
            await #expect(throws: RetryLater.self) { try await harness.maintenanceHandler().handle(job) }
            try await harness.database.client.query(
                "DELETE FROM messenger.outbox WHERE chat_room_id = \(room)", logger: .quiet)
            for _ in 0..<2 { try await harness.maintenanceHandler(stepLimit: 1).handle(job) }
            _ = try await harness.runMaintenance(stepLimit: 1)
            #expect(try await count(harness, "SELECT count(*) FROM messenger.chat_room WHERE id = \(room)") == 0)
            #expect(
                try await count(harness, "SELECT count(*) FROM messenger.message WHERE chat_room_id = \(room)") == 0)
            #expect(try await count(harness, "SELECT count(*) FROM cloud.file WHERE id = \(attached.fileID)") == 0)
            #expect(try await harness.blobStore.size(key: attached.key) == nil)
        }
    }

    @Test func retentionIsSetByAdminsAndPurgesOldMessagesKeepingTheSeqOfTheRest() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let path = "/v1/rooms/\(room)/retention"
            let unset = try await client.json(.get, path, token: token(reader))
            #expect(unset.status == .ok && unset.json.keys.contains("maxAgeDays") && unset.json["maxAgeDays"] is NSNull)
            #expect(
                try await client.json(.put, path, token: token(writer), body: #"{"maxAgeDays":30}"#).status
                    == .forbidden)
            let invalid = try await client.json(.put, path, token: token(admin), body: #"{"maxAgeDays":0}"#)
            #expect(invalid.status == .badRequest && invalid.problem?.field == "maxAgeDays")
            let set = try await client.json(.put, path, token: token(admin), body: #"{"maxAgeDays":30}"#)
            #expect(set.status == .ok && set.json["maxAgeDays"] as? Int == 30)
            #expect(try await client.json(.get, path, token: token(reader)).json["maxAgeDays"] as? Int == 30)

            let old = try await AccountDeletionTests().sendWithFile(client, harness, room: room, as: writer, uid: "o-1")
            let kept = try await client.send("recent", uid: "r-1", to: room, as: writer)
            // The admin has read up to the message about to be purged: that marker goes with it.
            let readOld = try await client.json(
                .post, "/v1/rooms/\(room)/read", token: token(admin), body: #"{"seq":\#(kept.seq - 1)}"#)
            #expect(readOld.status == .ok)
            try await harness.database.client.query(
                """
                UPDATE messenger.message SET created_at = now() - interval '31 days'
                WHERE chat_room_id = \(room) AND uid IN ('first', 'o-1')
                """, logger: .quiet)
            // Another room, with no retention of its own and none by default, keeps everything.
            let (other, others) = try await client.roomOfThree()
            try await harness.database.client.query(
                "UPDATE messenger.message SET created_at = now() - interval '400 days' WHERE chat_room_id = \(other)",
                logger: .quiet)

            #expect(try await harness.sweeper().sweep() == 2)
            let history = try await client.history(room, as: reader).messages
            #expect(history.map(\.seq) == [kept.seq])
            // What was purged is not unread any more, whoever had read it.
            let seen = try await client.json(.get, "/v1/rooms/\(room)", token: token(reader))
            #expect(seen.json["unreadCount"] as? Int == 1 && seen.json["lastSeq"] as? Int == Int(kept.seq))
            let adminSees = try await client.json(.get, "/v1/rooms/\(room)", token: token(admin))
            #expect(adminSees.json["unreadCount"] as? Int == 1 && adminSees.json["lastReadSeq"] is NSNull)
            let dangling = """
                SELECT count(*) FROM messenger.read_marker r
                WHERE NOT EXISTS (SELECT 1 FROM messenger.message m WHERE m.id = r.message_id)
                """
            #expect(try await count(harness, dangling) == 0)
            #expect(try await count(harness, "SELECT count(*) FROM cloud.file WHERE id = \(old.fileID)") == 0)
            #expect(try await harness.blobStore.size(key: old.key) == nil)
            #expect(try await client.history(other, as: others[2]).messages.count == 1)
            // The server's default reaches rooms without their own.
            #expect(try await harness.sweeper(defaultRetentionDays: 365).sweep() == 1)
            #expect(try await client.history(other, as: others[2]).messages.isEmpty)
            #expect(try await client.json(.put, path, token: token(admin), body: #"{"maxAgeDays":null}"#).status == .ok)
            #expect(try await client.json(.get, path, token: token(reader)).json["maxAgeDays"] is NSNull)
        }
    }
}
