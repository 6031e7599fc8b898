import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// `DELETE /v1/me` and `DELETE /v1/admin/users/{id}`: the account ends at once, the job
/// erases the rest; checked in PostgreSQL and the file store themselves.
struct AccountDeletionTests {
    let files = FileRoutesTests()

    /// Sends a message with a fresh upload attached; the file's id and storage key.
    func sendWithFile(
        _ client: any TestClientProtocol, _ harness: APIHarness, room: Int, as sender: LoginResponse, uid: String
    ) async throws -> (fileID: Int64, key: String) {
        let uploaded = try await files.upload(client, token: token(sender), FileRoutesTests.png, type: "image/png")
        let fileID = try #require(uploaded.file?.id)
        let sent = try await client.json(
            .post, "/v1/rooms/\(room)/messages", token: token(sender),
            body: #"{"content":"see","uid":"\#(uid)","fileId":\#(fileID)}"#)
        #expect(sent.status == .created)
        let key = try await harness.database.client.query(
            "SELECT storage_key FROM cloud.file WHERE id = \(fileID)", logger: .quiet
        ).single(String.self)
        return (fileID, key)
    }

    func count(_ harness: APIHarness, _ sql: String) async throws -> Int {
        try await harness.database.client.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).single(Int.self)
    }

    @Test func deletingOneselfEndsTheAccountAtOnceAndTheJobErasesItsData() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, leaving) = (users[0], users[1])
            let id = userID(leaving)
            let before = try await client.send("mine", uid: "m-1", to: room, as: leaving)
            let attached = try await sendWithFile(client, harness, room: room, as: leaving, uid: "m-2")
            let unattached = try #require(
                try await files.upload(client, token: token(leaving), FileRoutesTests.png, type: "image/png").file?.id)
            let reacted = try await client.send("react here", uid: "a-1", to: room, as: admin)
            _ = try await client.json(
                .put, "/v1/rooms/\(room)/messages/\(reacted.id)/reactions/%F0%9F%91%8D", token: token(leaving))
            _ = try await client.json(.put, "/v1/me/blocks/\(userID(admin))", token: token(leaving))
            let email = try #require(leaving.user.email)

            let wrong = try await client.json(
                .delete, "/v1/me", token: token(leaving), body: #"{"currentPassword":"wrong horse"}"#)
            #expect(wrong.status == .unauthorized && wrong.problem?.code == "invalid-credentials")
            #expect(try await client.json(.delete, "/v1/me", token: token(leaving), body: "{}").status == .badRequest)
            let deleted = try await client.json(
                .delete, "/v1/me", token: token(leaving), body: #"{"currentPassword":"correct horse"}"#)
            #expect(deleted.status == .accepted)

            // At once: the token is dead, the login answers as for an unknown e-mail, the
            // e-mail is free again, and other users see "Deleted user".
            #expect(try await client.json(.get, "/v1/me", token: token(leaving)).status == .unauthorized)
            let login = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"\#(email)","password":"correct horse"}"#)
            #expect(login.status == .unauthorized && login.problem?.code == "invalid-credentials")
            let seen = try await client.json(.get, "/v1/users/\(id)", token: token(admin))
            #expect(seen.json["firstName"] as? String == "Deleted" && seen.json["lastName"] as? String == "user")
            #expect(
                try await count(
                    harness, "SELECT count(*) FROM notifications.user_push_token WHERE user_account_id = \(id)") == 0)
            _ = try await client.signUp(email: email)

            // The job, twice: the second run finds nothing left.
            #expect(harness.maintenanceJobs.count == 1)
            let job = try #require(harness.maintenanceJobs.take().first)
            for _ in 0..<2 { try await harness.maintenanceHandler().handle(job) }

            let history = try await client.history(room, as: admin).messages
            let tombstones = history.filter { $0.sentById == id }
            #expect(tombstones.count == 2 && tombstones.allSatisfy { $0.deletedAt != nil && $0.content.isEmpty })
            #expect(history.map(\.seq) == Array(1...Int64(history.count)))
            #expect(tombstones.first?.seq == before.seq)
            let reaction = try #require(
                try await client.history(room, as: admin).messages.first { $0.id == reacted.id })
            #expect(reaction.reactions.isEmpty)
            for table in [
                "cloud.device", "cloud.session", "messenger.chat_room_to_user_account", "messenger.reaction",
                "messenger.read_marker",
            ] {
                #expect(try await count(harness, "SELECT count(*) FROM \(table) WHERE user_account_id = \(id)") == 0)
            }
            #expect(try await count(harness, "SELECT count(*) FROM messenger.user_block WHERE blocker_id = \(id)") == 0)
            #expect(
                try await count(
                    harness,
                    "SELECT count(*) FROM messenger.message WHERE sent_by_id = \(id) AND (content <> '' OR file_id IS NOT NULL)"
                ) == 0)
            #expect(try await count(harness, "SELECT count(*) FROM cloud.file WHERE uploaded_by_id = \(id)") == 0)
            #expect(try await harness.blobStore.size(key: attached.key) == nil)
            _ = unattached
            let erased = try await count(
                harness,
                """
                SELECT count(*) FROM cloud.user_account WHERE id = \(id) AND erased_at IS NOT NULL
                  AND first_name = 'Deleted' AND email NOT LIKE '%example.com'
                """)
            #expect(erased == 1)
            // The room lost a member, with the usual event.
            let events = try await RecordedEvents.roomEvents(harness.database, roomID: Int64(room))
            #expect(events.contains { $0.contains(#""change":"members""#) })
        }
    }

    @Test func aReportedFileOutlivesItsUploadersDeletionUntilTheReportIsResolved() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let attached = try await sendWithFile(client, harness, room: room, as: users[1], uid: "f-1")
            let message = try #require(try await client.history(room, as: users[2]).messages.last)
            _ = try await client.json(
                .post, "/v1/rooms/\(room)/messages/\(message.id)/reports", token: token(users[2]),
                body: #"{"reason":"illegal"}"#)
            _ = try await client.json(
                .delete, "/v1/me", token: token(users[1]), body: #"{"currentPassword":"correct horse"}"#)
            try await harness.runMaintenance()
            #expect(try await harness.blobStore.size(key: attached.key) != nil)
            #expect(try await count(harness, "SELECT count(*) FROM cloud.file WHERE id = \(attached.fileID)") == 1)
        }
    }

    @Test func administratorsDeleteOtherAccountsOnly() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let user = try await client.signUp()
            let me = try await client.json(.get, "/v1/me", token: admin)
            let adminID = try #require(me.json["id"] as? Int)
            let own = try await client.json(.delete, "/v1/admin/users/\(adminID)", token: admin)
            #expect(own.status == .badRequest)
            #expect(try await client.json(.delete, "/v1/admin/users/999999", token: admin).status == .notFound)
            #expect(try await client.json(.delete, "/v1/admin/users/\(userID(user))", token: admin).status == .accepted)
            #expect(try await client.json(.get, "/v1/me", token: token(user)).status == .unauthorized)
            // Deleted already: asking again ends what may be left, and queues the erasure again.
            #expect(try await client.json(.delete, "/v1/admin/users/\(userID(user))", token: admin).status == .accepted)
            // Gone from the directory and the administrators' list.
            let found = try await client.decoded(
                ListPage<UserResponse>.self, .get, "/v1/admin/users?q=Deleted", token: admin)
            #expect(found.items.isEmpty)
            try await harness.runMaintenance()
        }
    }

    /// A device that keeps sending while its account is deleted: whatever was stored, the
    /// erasure leaves only tombstones.
    @Test func anAccountDeletedWhileItsDeviceSendsLeavesOnlyTombstones() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let sender = users[1]
            async let sending: Int = {
                var stored = 0
                for index in 0..<200 {
                    let answer = try await client.json(
                        .post, "/v1/rooms/\(room)/messages", token: token(sender),
                        body: #"{"content":"busy","uid":"b-\#(index)"}"#)
                    if answer.status == .unauthorized { break }
                    stored += 1
                }
                return stored
            }()
            try await Task.sleep(for: .milliseconds(50))
            let deleted = try await client.json(
                .delete, "/v1/me", token: token(sender), body: #"{"currentPassword":"correct horse"}"#)
            #expect(deleted.status == .accepted)
            let stored = try await sending
            #expect(stored < 200)
            try await harness.runMaintenance(stepLimit: 7)
            #expect(
                try await count(
                    harness,
                    "SELECT count(*) FROM messenger.message WHERE sent_by_id = \(userID(sender)) AND deleted_at IS NULL"
                ) == 0)
        }
    }

    @Test func theSweepQueuesErasuresWhoseJobWasLost() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let user = try await client.signUp()
            _ = try await client.json(
                .delete, "/v1/me", token: token(user), body: #"{"currentPassword":"correct horse"}"#)
            _ = harness.maintenanceJobs.take()
            try await harness.sweeper().sweep(now: Date().addingTimeInterval(120))
            #expect(harness.maintenanceJobs.count == 1)
            try await harness.runMaintenance()
            try await harness.sweeper().sweep(now: Date().addingTimeInterval(120))
            #expect(harness.maintenanceJobs.count == 0)
        }
    }
}
