import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyTestSupport
import ParleyWorker
import Testing

@testable import ParleyAPI

/// Signed file links name their viewer and open only while that viewer may read the file:
/// a removal or a deletion ends them at once (<doc:SignedFileLinks>).
extension FileRoutesTests {
    /// A JPEG with its thumbnails made, attached to a message `sender` sends in `roomID`.
    func sentImage(
        _ client: any TestClientProtocol, harness: APIHarness, roomID: Int, by sender: LoginResponse
    ) async throws -> (fileID: Int64, message: Message) {
        let directory = TestScratch.path("parley-revoke")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let picture = try await Subprocess.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240", "-frames:v", "1",
                "-f", "image2", "-update", "1", "\(directory)/p.jpg",
            ])
        #expect(picture.status == 0)
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(directory)/p.jpg")))
        let fileID = try #require(
            try await upload(client, token: token(sender), jpeg, type: "image/jpeg", query: "name=p.jpg").file?.id)
        try await MediaHandler(
            files: PostgresFileRepository(database: harness.database, logger: .quiet), store: harness.blobStore,
            processor: ToolMediaProcessor(), workRoot: directory, logger: .quiet
        ).handle(MediaJob(fileID: fileID).json())
        let message = try await client.decoded(
            Message.self, .post, "/v1/rooms/\(roomID)/messages", token: token(sender),
            body: #"{"content":"look","uid":"img-\#(fileID)","fileId":\#(fileID)}"#)
        return (fileID, message)
    }

    /// The content and thumbnail links `reader` gets in the room's history for `fileID`.
    func links(
        _ client: any TestClientProtocol, roomID: Int, fileID: Int64, as reader: LoginResponse
    ) async throws -> [String] {
        let file = try #require(
            try await client.history(roomID, as: reader).messages.first { $0.file?.id == fileID }?.file)
        return [file.url, try #require(file.thumbnails.small), try #require(file.thumbnails.large)]
    }

    func statuses(_ client: any TestClientProtocol, _ links: [String]) async throws -> [Int] {
        var statuses: [Int] = []
        for link in links { statuses.append(try await send(client, .get, link).status.code) }
        return statuses
    }

    @Test func aRemovedMembersLinksEndAtOnceWhileOtherMembersStillOpen() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (roomID, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let (fileID, _) = try await sentImage(client, harness: harness, roomID: roomID, by: writer)
            let readers = try await links(client, roomID: roomID, fileID: fileID, as: reader)
            let admins = try await links(client, roomID: roomID, fileID: fileID, as: admin)
            // Each link is signed for the one it was given to.
            #expect(readers.allSatisfy { $0.contains("viewer=\(userID(reader))&") })
            #expect(admins.allSatisfy { $0.contains("viewer=\(userID(admin))&") })
            #expect(try await statuses(client, readers + admins).allSatisfy { $0 == 200 })
            // Naming someone else breaks the signature.
            let borrowed = readers[0].replacingOccurrences(
                of: "viewer=\(userID(reader))&", with: "viewer=\(userID(admin))&")
            #expect(try await send(client, .get, borrowed).status == .forbidden)

            let removed = try await client.json(
                .delete, "/v1/rooms/\(roomID)/members/\(userID(reader))", token: token(admin))
            #expect(removed.status == .noContent)
            // At once: no wait, content and both thumbnails.
            #expect(try await statuses(client, readers) == [404, 404, 404])
            #expect(try await statuses(client, admins) == [200, 200, 200])
        }
    }

    @Test func aDeletedMessagesFileLinksEndForEveryoneButItsUploader() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (roomID, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let (fileID, message) = try await sentImage(client, harness: harness, roomID: roomID, by: writer)
            let others =
                try await links(client, roomID: roomID, fileID: fileID, as: reader)
                + links(client, roomID: roomID, fileID: fileID, as: admin)
            let uploaders = try await links(client, roomID: roomID, fileID: fileID, as: writer)
            #expect(try await statuses(client, others + uploaders).allSatisfy { $0 == 200 })

            let deleted = try await client.json(
                .delete, "/v1/rooms/\(roomID)/messages/\(message.id)", token: token(admin))
            #expect(deleted.status == .noContent)
            #expect(try await statuses(client, others).allSatisfy { $0 == 404 })
            // The uploader's own file stays theirs until the orphan sweep removes it, as before
            // any message carried it.
            #expect(try await statuses(client, uploaders).allSatisfy { $0 == 200 })
        }
    }

    @Test func aSignedLinkLastsTheConfiguredHourAndNoLonger() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let id = try #require(try await upload(client, token: token(user), Self.bytes(10)).file?.id)
            let object = try #require(
                try await send(client, .get, "/v1/files/\(id)", token: token(user)).file)
            let url = try #require(URLComponents(string: object.url))
            let expires = try #require(url.queryItems?.first { $0.name == "expires" }?.value.flatMap { Int64($0) })
            #expect(abs(expires - Int64(Date().timeIntervalSince1970) - 3_600) <= 5)

            let path = "/v1/files/\(id)/content"
            let links = APIHarness.fileLinks
            #expect(links.lifetime == .seconds(3_600))
            let stale = links.signed(path, viewer: userID(user), now: Date().addingTimeInterval(-3_610))
            #expect(try await send(client, .get, stale).status == .forbidden)
            let fresh = links.signed(path, viewer: userID(user), now: Date().addingTimeInterval(-3_500))
            #expect(try await send(client, .get, fresh).status == .ok)
            // A link naming no viewer opens only a data export.
            let anyone = links.signed(path, expiresAt: Date().addingTimeInterval(60))
            #expect(try await send(client, .get, anyone).status == .notFound)
        }
    }
}
