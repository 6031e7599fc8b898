import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ParleyAPI

struct RoomRoutesTests {
    /// Three signed-in users.
    func trio(_ client: any TestClientProtocol) async throws -> [LoginResponse] {
        try await client.signUp(count: 3)
    }

    func createRoom(
        _ client: any TestClientProtocol, by creator: LoginResponse, members: [LoginResponse], role: String = "writer"
    ) async throws -> RoomResponse {
        try await client.createRoom(
            by: creator, members: members.map { ($0, role) }, name: "Team", firstMessage: ("hello", "u-1"))
    }

    @Test func creatingAMultipartyRoom() async throws {
        try await APIHarness.make().run { client in
            let users = try await trio(client)
            let room = try await createRoom(client, by: users[0], members: [users[1], users[2]])
            #expect(room.type == .multiparty && room.name == "Team")
            #expect(room.myRole == .admin)
            #expect(room.lastSeq == 1)
            #expect(room.unreadCount == 0)
            #expect(room.topic == "chat-room/\(room.uid)")
            #expect(room.uid.count >= 16)
            #expect(room.peer == nil)

            let seen = try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(room.id)", token: token(users[1]))
            #expect(seen.myRole == .writer)
            #expect(seen.unreadCount == 1)

            let tooFew = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body:
                    #"{"name":"x","members":[{"userId":\#(userID(users[1])),"role":"reader"},{"userId":\#(userID(users[0])),"role":"reader"}],"firstMessage":{"content":"hi","uid":"a"}}"#
            )
            #expect(tooFew.problem?.field == "members")
            let unknown = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body:
                    #"{"name":"x","members":[{"userId":\#(userID(users[1])),"role":"reader"},{"userId":999999,"role":"reader"}],"firstMessage":{"content":"hi","uid":"a"}}"#
            )
            #expect(unknown.status == .notFound)
            let badRole = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body: #"{"name":"x","members":[{"userId":1,"role":"owner"}],"firstMessage":{"content":"hi","uid":"a"}}"#
            )
            #expect(badRole.problem?.field == "members.0.role")
            // A first message is optional; the members are not.
            let noMembers = try await client.json(
                .post, "/v1/rooms", token: token(users[0]), body: #"{"name":"x","members":[]}"#)
            #expect(noMembers.problem?.field == "members")
        }
    }

    @Test func nonMembersGet404AndReadersGet403() async throws {
        try await APIHarness.make().run { client in
            let users = try await trio(client)
            let outsider = try await client.signUp()
            let room = try await createRoom(client, by: users[0], members: [users[1], users[2]], role: "reader")
            let id = room.id
            for (method, path, body) in [
                (HTTPRequest.Method.get, "/v1/rooms/\(id)", nil as String?),
                (.get, "/v1/rooms/\(id)/members", nil), (.get, "/v1/rooms/\(id)/messages", nil),
                (.post, "/v1/rooms/\(id)/messages", #"{"content":"x","uid":"o"}"#),
            ] {
                #expect(try await client.json(method, path, token: token(outsider), body: body).status == .notFound)
            }
            let send = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: #"{"content":"x","uid":"r"}"#)
            #expect(send.status == .forbidden)
            let rename = try await client.json(
                .patch, "/v1/rooms/\(id)", token: token(users[1]), body: #"{"name":"n"}"#)
            #expect(rename.status == .forbidden)
            let renamed = try await client.decoded(
                RoomResponse.self, .patch, "/v1/rooms/\(id)", token: token(users[0]), body: #"{"name":"New"}"#)
            #expect(renamed.name == "New" && renamed.id == id)
        }
    }

    @Test func directRoomsAreOnePerPairEvenUnderConcurrentCalls() async throws {
        try await APIHarness.make().run { client in
            let (a, b) = (try await client.signUp(), try await client.signUp())
            let pair = [(userID(a), token(a)), (userID(b), token(b))]
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Int).self) { group in
                for index in 0..<8 {
                    let (caller, peer) = (pair[index % 2].1, pair[1 - index % 2].0)
                    group.addTask {
                        let answer = try await client.json(.put, "/v1/rooms/direct/\(peer)", token: caller)
                        return (answer.status, answer.json["id"] as? Int ?? 0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(statuses.map(\.1)).count == 1)
            #expect(statuses.filter { $0.0 == .created }.count == 1)
            #expect(statuses.filter { $0.0 == .ok }.count == 7)
            let room = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(b))", token: token(a))
            #expect(Int(room.id) == statuses[0].1)
            #expect(room.type == .twoparty)
            #expect(room.myRole == .writer)
            // The peer as another user sees them: without their e-mail address.
            #expect(room.peer?.id == b.user.id && room.peer?.firstName == b.user.firstName)
            #expect(room.peer?.email == nil)
            #expect(room.name == nil)
            #expect(try await client.json(.put, "/v1/rooms/direct/\(userID(a))", token: token(a)).status == .badRequest)
            #expect(try await client.json(.put, "/v1/rooms/direct/999999", token: token(a)).status == .notFound)
            let rename = try await client.json(
                .patch, "/v1/rooms/\(room.id)", token: token(a), body: #"{"name":"n"}"#)
            #expect(rename.status == .forbidden)
        }
    }

    @Test func membersAreAddedChangedAndRemovedAndMayLeave() async throws {
        try await APIHarness.make().run { client in
            let users = try await trio(client)
            let newcomer = try await client.signUp()
            let room = try await createRoom(client, by: users[0], members: [users[1], users[2]])
            let id = room.id
            let added = try await client.decoded(
                MemberResponse.self, .put, "/v1/rooms/\(id)/members/\(userID(newcomer))", token: token(users[0]),
                body: #"{"role":"reader"}"#)
            #expect(added.user.id == newcomer.user.id && added.user.email == nil)
            #expect(added.role == .reader)
            #expect(added.via == ["direct"])
            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(newcomer)).status == .ok)

            let members = try await client.decoded(
                ListPage<MemberResponse>.self, .get, "/v1/rooms/\(id)/members", token: token(newcomer))
            #expect(Set(members.items.map(\.user.id)) == Set((users + [newcomer]).map(userID)))

            let byWriter = try await client.json(
                .put, "/v1/rooms/\(id)/members/\(userID(newcomer))", token: token(users[1]), body: #"{"role":"admin"}"#)
            #expect(byWriter.status == .forbidden)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(newcomer))", token: token(users[0]))
                    .status
                    == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(newcomer)).status == .notFound)
            // Leaving.
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(users[2]))", token: token(users[2]))
                    .status
                    == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(users[2])).status == .notFound)
        }
    }
}
