import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Archiving, descriptions and rooms created without a message, over REST on real PostgreSQL.
struct RoomLifecycleRoutesTests {
    @Test func anArchivedRoomIsReadOnlyButStillReadAndListed() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let sent = try await client.send("before", uid: "a-1", to: id, as: writer)
            #expect(try await client.json(.post, "/v1/rooms/\(id)/archive", token: token(writer)).status == .forbidden)
            for _ in 0..<2 {
                #expect(
                    try await client.json(.post, "/v1/rooms/\(id)/archive", token: token(admin)).status == .noContent)
            }
            let room = try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(id)", token: token(reader))
            #expect(room.archived)
            let listed = try await client.decoded(RoomsResponse.self, .get, "/v1/rooms", token: token(reader))
            #expect(listed.rooms.first { $0.id == id }?.archived == true)

            func refused(_ answer: JSONAnswer) -> Bool {
                answer.status == .forbidden && answer.problem?.code == "room-archived"
            }
            #expect(
                refused(
                    try await client.json(
                        .post, "/v1/rooms/\(id)/messages", token: token(writer), body: #"{"content":"x","uid":"a-2"}"#))
            )
            #expect(
                refused(
                    try await client.json(
                        .patch, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(writer), body: #"{"content":"y"}"#))
            )
            #expect(
                refused(
                    try await client.json(
                        .put, "/v1/rooms/\(id)/messages/\(sent.id)/reactions/:ok:", token: token(admin))))
            #expect(try await client.history(id, as: reader).messages.map(\.content) == ["first", "before"])
            // Only an admin takes it out of the archive; then it is writable again.
            #expect(
                try await client.json(.post, "/v1/rooms/\(id)/unarchive", token: token(reader)).status == .forbidden)
            // A retry of a message stored before the archive is answered as stored.
            let retry = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer), body: #"{"content":"before","uid":"a-1"}"#)
            #expect(retry.status == .ok && retry.json["id"] as? Int == Int(sent.id))
            #expect(try await client.json(.post, "/v1/rooms/\(id)/unarchive", token: token(admin)).status == .noContent)
            _ = try await client.send("after", uid: "a-3", to: id, as: writer)
            #expect(
                try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(id)", token: token(reader)).archived
                    == false)
        }
    }

    @Test func anAdminDescribesAMultipartyRoom() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let path = "/v1/rooms/\(id)"
            #expect(try await client.decoded(RoomResponse.self, .get, path, token: token(users[2])).description == nil)
            let described = try await client.decoded(
                RoomResponse.self, .patch, path, token: token(users[0]), body: #"{"description":"Plans for Q1"}"#)
            #expect(described.description == "Plans for Q1" && described.name == "T")
            let renamed = try await client.decoded(
                RoomResponse.self, .patch, path, token: token(users[0]), body: #"{"name":"Team"}"#)
            #expect(renamed.description == "Plans for Q1" && renamed.name == "Team")
            let cleared = try await client.decoded(
                RoomResponse.self, .patch, path, token: token(users[0]), body: #"{"description":null}"#)
            #expect(cleared.description == nil)
            let long = String(repeating: "é", count: 501)
            let tooLong = try await client.json(
                .patch, path, token: token(users[0]), body: #"{"description":"\#(long)"}"#)
            #expect(tooLong.status == .badRequest && tooLong.problem?.field == "description")
            #expect(try await client.json(.patch, path, token: token(users[0]), body: "{}").status == .badRequest)
            #expect(
                try await client.json(.patch, path, token: token(users[1]), body: #"{"description":"x"}"#).status
                    == .forbidden)
            let direct = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let twoParty = try await client.json(
                .patch, "/v1/rooms/\(direct.id)", token: token(users[0]), body: #"{"description":"x"}"#)
            #expect(twoParty.status == .forbidden || twoParty.problem?.field == "name")
            #expect(twoParty.status.code < 500)
            // An empty description is none.
            let empty = try await client.decoded(
                RoomResponse.self, .patch, path, token: token(users[0]), body: #"{"description":""}"#)
            #expect(empty.description == nil)
        }
    }

    @Test func aRoomMayStartWithoutAMessage() async throws {
        try await APIHarness.make().run { client in
            let users = try await client.signUp(count: 3)
            let body = NewRoom(
                name: "Quiet", members: users[1...].map { NewRoom.Member(userId: userID($0), role: "writer") })
            let room = try await client.decoded(
                RoomResponse.self, .post, "/v1/rooms", token: token(users[0]), body: try jsonText(body))
            #expect(room.lastSeq == 0 && room.lastMessageAt == nil && room.unreadCount == 0)
            #expect(try await client.history(Int(room.id), as: users[1]).messages.isEmpty)
            let first = try await client.send("now", uid: "n-1", to: Int(room.id), as: users[1])
            #expect(first.seq == 1)
        }
    }
}

extension RoomLifecycleRoutesTests {
    @Test func aHiddenRoomLeavesTheListUntilANewMessageArrives() async throws {
        try await APIHarness.make().run { client in
            let (me, peer) = (try await client.signUp(), try await client.signUp())
            let direct = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(peer))", token: token(me))
            _ = try await client.send("hi", uid: "h-1", to: Int(direct.id), as: peer)
            func listed() async throws -> Bool {
                try await client.decoded(RoomsResponse.self, .get, "/v1/rooms", token: token(me)).rooms.contains {
                    $0.id == direct.id
                }
            }
            #expect(try await listed())
            let hide = try await client.json(
                .put, "/v1/rooms/\(direct.id)/hidden", token: token(me), body: #"{"hidden":true}"#)
            #expect(hide.status == .noContent)
            #expect(try await !listed())
            // Still there when asked for, and for the other member.
            #expect(try await client.json(.get, "/v1/rooms/\(direct.id)", token: token(me)).status == .ok)
            #expect(
                try await client.decoded(RoomsResponse.self, .get, "/v1/rooms", token: token(peer)).rooms.count == 1)
            // A new message brings it back; hiding again and showing it work alike.
            _ = try await client.send("are you there?", uid: "h-2", to: Int(direct.id), as: peer)
            #expect(try await listed())
            _ = try await client.json(
                .put, "/v1/rooms/\(direct.id)/hidden", token: token(me), body: #"{"hidden":true}"#)
            #expect(try await !listed())
            _ = try await client.json(
                .put, "/v1/rooms/\(direct.id)/hidden", token: token(me), body: #"{"hidden":false}"#)
            #expect(try await listed())
            let outsider = try await client.signUp()
            #expect(
                try await client.json(
                    .put, "/v1/rooms/\(direct.id)/hidden", token: token(outsider), body: #"{"hidden":true}"#
                ).status == .notFound)
        }
    }
}
