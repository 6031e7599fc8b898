import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyWorker
import Testing

@testable import ParleyAPI

/// `PUT /v1/me/avatar` and `PUT /v1/rooms/{id}/avatar`: an uploaded image becomes the
/// `avatar` File of the User or Room, kept from the orphan sweep while it is one.
struct AvatarRoutesTests {
    let files = FileRoutesTests()

    func uploadImage(_ client: any TestClientProtocol, _ user: LoginResponse) async throws -> Int64 {
        let uploaded = try await files.upload(
            client, token: token(user), FileRoutesTests.png, type: "image/png", query: "name=me.png")
        return try #require(uploaded.file?.id)
    }

    @Test func aUsersAvatarIsTheirOwnImageAndOthersSeeIt() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (me, other) = (users[1], users[2])
            #expect(try await client.json(.get, "/v1/me", token: token(me)).json["avatar"] is NSNull)
            let image = try await uploadImage(client, me)
            let foreign = try await uploadImage(client, other)
            let text = try #require(
                try await files.upload(client, token: token(me), Array("hello".utf8), type: "text/plain").file?.id)

            let notMine = try await client.json(
                .put, "/v1/me/avatar", token: token(me), body: #"{"fileId":\#(foreign)}"#)
            #expect(notMine.status == .notFound)
            let notImage = try await client.json(.put, "/v1/me/avatar", token: token(me), body: #"{"fileId":\#(text)}"#)
            #expect(notImage.status == .badRequest && notImage.problem?.field == "fileId")
            #expect(
                try await client.json(.put, "/v1/me/avatar", token: token(me), body: #"{"fileId":\#(image)}"#).status
                    == .noContent)

            let own = try #require(try await client.decoded(UserResponse.self, .get, "/v1/me", token: token(me)).avatar)
            #expect(own.id == image && own.mimeType == "image/png")
            let seen = try await client.decoded(UserResponse.self, .get, "/v1/users/\(userID(me))", token: token(other))
            let avatar = try #require(seen.avatar)
            #expect(try await files.send(client, .get, avatar.url).status == .ok)
            let members = try await client.decoded(
                ListPage<MemberResponse>.self, .get, "/v1/rooms/\(room)/members", token: token(other))
            #expect(members.items.first { $0.user.id == userID(me) }?.user.avatar != nil)

            // Held: the orphan sweep leaves an avatar, however old.
            let removed = try await OrphanSweeper(
                files: PostgresFileRepository(database: harness.database, logger: .quiet), store: harness.blobStore,
                logger: .quiet
            ).sweep(now: Date().addingTimeInterval(2 * 86_400))
            #expect(removed >= 1)
            #expect(try await client.json(.get, "/v1/files/\(image)", token: token(me)).status == .ok)
            #expect(try await client.json(.get, "/v1/files/\(text)", token: token(me)).status == .notFound)

            #expect(
                try await client.json(.put, "/v1/me/avatar", token: token(me), body: #"{"fileId":null}"#).status
                    == .noContent)
            #expect(try await client.json(.get, "/v1/me", token: token(me)).json["avatar"] is NSNull)
        }
    }

    @Test func roomAdminsSetTheRoomsAvatarAndMembersAreTold() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer) = (users[0], users[1])
            let image = try await uploadImage(client, admin)
            let path = "/v1/rooms/\(room)/avatar"
            let writers = try await uploadImage(client, writer)
            #expect(
                try await client.json(.put, path, token: token(writer), body: #"{"fileId":\#(writers)}"#).status
                    == .forbidden)
            #expect(
                try await client.json(.put, path, token: token(admin), body: #"{"fileId":\#(image)}"#).status
                    == .noContent)
            let seen = try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(room)", token: token(writer))
            #expect(seen.avatar?.id == image)
            let listed = try await client.decoded(RoomsResponse.self, .get, "/v1/rooms", token: token(writer))
            #expect(listed.rooms.first { $0.id == Int64(room) }?.avatar?.id == image)
            let changes = try await RecordedEvents.roomEvents(harness.database, roomID: Int64(room))
            #expect(changes.filter { $0.contains(#""change":"avatar""#) }.count == 1)
            let pair = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(writer))", token: token(admin))
            #expect(pair.avatar == nil)
        }
    }
}
