import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Blocks over REST on real PostgreSQL: the list, and what a block refuses in rooms.
struct BlockRoutesTests {
    @Test func blocksAreListedAndIdempotentAndOneCannotBlockOneself() async throws {
        try await APIHarness.make().run { client in
            let users = try await client.signUp(count: 4)
            let me = token(users[0])
            let myself = try await client.json(.put, "/v1/me/blocks/\(userID(users[0]))", token: me)
            #expect(myself.status == .badRequest && myself.problem?.field == "userId")
            #expect(try await client.json(.put, "/v1/me/blocks/999999999", token: me).status == .notFound)
            for user in users[1...] {
                #expect(try await client.json(.put, "/v1/me/blocks/\(userID(user))", token: me).status == .noContent)
            }
            #expect(try await client.json(.put, "/v1/me/blocks/\(userID(users[1]))", token: me).status == .noContent)
            let pages = try await client.pages(ListPage<UserResponse>.self, "/v1/me/blocks?limit=2", token: me) {
                ($0.items.map(\.id), $0.nextCursor)
            }
            #expect(pages == [[userID(users[1]), userID(users[2])], [userID(users[3])]])
            for _ in 0..<2 {
                #expect(
                    try await client.json(.delete, "/v1/me/blocks/\(userID(users[2]))", token: me).status == .noContent)
            }
            let left = try await client.decoded(ListPage<UserResponse>.self, .get, "/v1/me/blocks", token: me)
            #expect(left.items.map(\.id) == [userID(users[1]), userID(users[3])])
            // Another user's list is their own.
            #expect(
                try await client.decoded(ListPage<UserResponse>.self, .get, "/v1/me/blocks", token: token(users[1]))
                    .items.isEmpty)
        }
    }

    @Test func aBlockedUserCannotOpenOrWriteInTheDirectRoomButStillInMultipartyRooms() async throws {
        try await APIHarness.make().run { client in
            let users = try await client.signUp(count: 3)
            let (blocker, blocked) = (users[0], users[1])
            let direct = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(blocker))", token: token(blocked))
            _ = try await client.send("before", uid: "b-0", to: Int(direct.id), as: blocked)
            let group = try await client.multipartyRoom(
                by: users[2], members: [(blocker, "writer"), (blocked, "writer")])
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(blocked))", token: token(blocker)).status
                    == .noContent)

            let open = try await client.json(.put, "/v1/rooms/direct/\(userID(blocker))", token: token(blocked))
            #expect(open.status == .forbidden && open.problem?.code == "blocked")
            let write = try await client.json(
                .post, "/v1/rooms/\(direct.id)/messages", token: token(blocked), body: #"{"content":"hey","uid":"b-1"}"#
            )
            #expect(write.status == .forbidden && write.problem?.code == "blocked")
            // A reply or a mention takes the general path: refused alike.
            let reply = try await client.json(
                .post, "/v1/rooms/\(direct.id)/messages", token: token(blocked),
                body: #"{"content":"hey","uid":"b-2","mentions":[\#(userID(blocker))]}"#)
            #expect(reply.status == .forbidden && reply.problem?.code == "blocked")
            // Nor edit, nor react there.
            let mine = try await client.history(Int(direct.id), as: blocked).messages[0]
            let edit = try await client.json(
                .patch, "/v1/rooms/\(direct.id)/messages/\(mine.id)", token: token(blocked), body: #"{"content":"x"}"#)
            #expect(edit.status == .forbidden && edit.problem?.code == "blocked")
            let react = try await client.json(
                .put, "/v1/rooms/\(direct.id)/messages/\(mine.id)/reactions/:ok:", token: token(blocked))
            #expect(react.status == .forbidden && react.problem?.code == "blocked")
            // The blocker may still open and write; the history stays readable to both.
            #expect(
                try await client.json(.put, "/v1/rooms/direct/\(userID(blocked))", token: token(blocker)).status == .ok)
            _ = try await client.send("bye", uid: "b-3", to: Int(direct.id), as: blocker)
            #expect(try await client.history(Int(direct.id), as: blocked).messages.map(\.content) == ["before", "bye"])
            // In a multiparty room their messages still arrive.
            _ = try await client.send("in the group", uid: "g-1", to: group.id, as: blocked)

            #expect(
                try await client.json(.delete, "/v1/me/blocks/\(userID(blocked))", token: token(blocker)).status
                    == .noContent)
            _ = try await client.send("again", uid: "b-4", to: Int(direct.id), as: blocked)
        }
    }
}
