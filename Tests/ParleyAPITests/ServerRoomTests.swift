import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `POST /v1/server/rooms` and `PUT`/`DELETE /v1/server/rooms/{id}/members/{externalId}`: the
/// app's backend makes rooms and memberships by its own user ids, as the app's authority on who
/// belongs where.
struct ServerRoomTests {
    /// `POST /v1/server/rooms`'s answer, as the backend reads it.
    struct Made: Decodable {
        let id: Int64
        let members: [ServerController.ServerMember]
    }

    /// Users the backend made by `externalId`, each signed in by token exchange.
    private func backendUsers(
        _ names: [String], key: IssuedAPIKey, signing: TestIssuer.Key, client: any TestClientProtocol,
        fixture: IssuerFixture
    ) async throws -> [String: LoginResponse] {
        var logins: [String: LoginResponse] = [:]
        for name in names {
            let email = "\(name)-\(UUID().uuidString.prefix(6))@example.com"
            let made = try await client.json(
                .put, "/v1/server/users/\(name)", token: key.secret, body: #"{"email":"\#(email)"}"#)
            #expect(made.status == .created, "\(made.text)")
            let token = try fixture.issuer.token(signing, subject: name, claims: profileClaims(email: email))
            logins[name] = try decode(LoginResponse.self, from: try await client.exchange(token).text)
        }
        return logins
    }

    private func backendKey(_ client: any TestClientProtocol, _ harness: APIHarness) async throws -> IssuedAPIKey {
        let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
        return try await client.decoded(
            IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
            body: #"{"name":"backend","scopes":["users:write","rooms:write"]}"#)
    }

    @Test func theBackendMakesARoomOfItsUsersWithTheirRoles() async throws {
        let signing = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([signing]) { client, fixture in
            let key = try await backendKey(client, fixture.harness)
            let users = try await backendUsers(
                ["ann", "bob"], key: key, signing: signing, client: client, fixture: fixture)
            let created = try await client.json(
                .post, "/v1/server/rooms", token: key.secret,
                body: #"""
                    {"name":"  Project X ","description":"All of X",
                     "members":[{"externalId":"ann","role":"admin"},{"externalId":"bob","role":"reader"}]}
                    """#)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.json["name"] as? String == "Project X" && created.json["type"] as? String == "multiparty")
            #expect(created.json["description"] as? String == "All of X")
            let members = try decode(Made.self, from: created.text).members
            #expect(members.map(\.externalId) == ["ann", "bob"])
            #expect(members.map(\.userId) == [users["ann"]?.user.id, users["bob"]?.user.id])
            let roomID = try #require(created.json["id"] as? Int)
            // Each member sees the room in their role; nobody else is in it (no creator).
            for (name, role) in [("ann", "admin"), ("bob", "reader")] {
                let room = try await client.json(.get, "/v1/rooms/\(roomID)", token: token(try #require(users[name])))
                #expect(room.status == .ok && room.json["myRole"] as? String == role, "\(name): \(room.text)")
            }
            let listed = try await client.json(
                .get, "/v1/rooms/\(roomID)/members", token: token(try #require(users["ann"])))
            #expect((listed.json["members"] as? [Any])?.count == 2)
            // The admin the backend named administers the room in the app.
            let renamed = try await client.json(
                .patch, "/v1/rooms/\(roomID)", token: token(try #require(users["ann"])), body: #"{"name":"Y"}"#)
            #expect(renamed.status == .ok)
        }
    }

    @Test(arguments: [
        (#"{"name":"R","members":[{"externalId":"ann","role":"admin"},{"externalId":"ann","role":"reader"}]}"#, 400),
        (#"{"name":"R","members":[{"externalId":"ann","role":"admin"},{"externalId":"nobody","role":"reader"}]}"#, 404),
        (#"{"name":"R","members":[]}"#, 400),
        (#"{"name":"  ","members":[{"externalId":"ann","role":"admin"}]}"#, 400),
        (#"{"name":"R","members":[{"externalId":"ann","role":"owner"}]}"#, 400),
        (#"{"name":"R","members":[{"externalId":"","role":"admin"}]}"#, 400),
    ])
    func aRoomBeyondTheContractIsRefusedAndNothingIsMade(_ body: String, _ status: Int) async throws {
        let signing = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([signing]) { client, fixture in
            let key = try await backendKey(client, fixture.harness)
            _ = try await backendUsers(["ann"], key: key, signing: signing, client: client, fixture: fixture)
            let refused = try await client.json(.post, "/v1/server/rooms", token: key.secret, body: body)
            #expect(refused.status.code == status, "\(refused.text)")
            #expect(refused.problem?.field == (status == 404 ? "members" : refused.problem?.field))
            let rooms = try await fixture.harness.database.client.query(
                "SELECT count(*) FROM messenger.chat_room", logger: .quiet
            ).single(Int64.self)
            #expect(rooms == 0)
        }
    }

    @Test func theBackendAddsChangesAndRemovesMembersPastADeparture() async throws {
        let signing = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([signing]) { client, fixture in
            let key = try await backendKey(client, fixture.harness)
            let users = try await backendUsers(
                ["ann", "bob", "cy"], key: key, signing: signing, client: client, fixture: fixture)
            let created = try await client.json(
                .post, "/v1/server/rooms", token: key.secret,
                body:
                    #"{"name":"R","members":[{"externalId":"ann","role":"admin"},{"externalId":"bob","role":"writer"}]}"#
            )
            let roomID = try #require(created.json["id"] as? Int)
            let path = "/v1/server/rooms/\(roomID)/members"
            let added = try await client.json(.put, "\(path)/cy", token: key.secret, body: #"{"role":"reader"}"#)
            #expect(added.status == .created, "\(added.text)")
            #expect(added.json["role"] as? String == "reader" && added.json["externalId"] as? String == "cy")
            let changed = try await client.json(.put, "\(path)/cy", token: key.secret, body: #"{"role":"writer"}"#)
            #expect(changed.status == .ok && changed.json["role"] as? String == "writer")
            // Cy leaves; an admin's add would be an invitation, the backend's is a membership.
            let cy = token(try #require(users["cy"]))
            let left = try await client.json(
                .delete, "/v1/rooms/\(roomID)/members/\(try #require(users["cy"]).user.id)", token: cy)
            #expect(left.status == .noContent, "\(left.text)")
            let back = try await client.json(.put, "\(path)/cy", token: key.secret, body: #"{"role":"reader"}"#)
            #expect(back.status == .created)
            #expect(try await client.json(.get, "/v1/rooms/\(roomID)", token: cy).status == .ok)
            // Removed, and again: 404; the last admin stays.
            #expect(try await client.json(.delete, "\(path)/cy", token: key.secret).status == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(roomID)", token: cy).status == .notFound)
            #expect(try await client.json(.delete, "\(path)/cy", token: key.secret).status == .notFound)
            let lastAdmin = try await client.json(.delete, "\(path)/ann", token: key.secret)
            #expect(lastAdmin.status == .conflict && lastAdmin.problem?.code == "last-admin")
            // No such room, no such user, a two-party room.
            let missing = try await client.json(
                .put, "/v1/server/rooms/999999999/members/cy", token: key.secret, body: #"{"role":"reader"}"#)
            #expect(missing.status == .notFound)
            let nobody = try await client.json(.put, "\(path)/nobody", token: key.secret, body: #"{"role":"reader"}"#)
            #expect(nobody.status == .notFound)
            let pair = try await client.json(
                .put, "/v1/rooms/direct/\(try #require(users["bob"]).user.id)", token: token(try #require(users["ann"]))
            )
            let pairID = try #require(pair.json["id"] as? Int)
            let twoParty = try await client.json(
                .put, "/v1/server/rooms/\(pairID)/members/cy", token: key.secret, body: #"{"role":"reader"}"#)
            #expect(twoParty.status == .forbidden)
        }
    }

    @Test func eventsNameTheAppsServerAsZero() async throws {
        let signing = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([signing]) { client, fixture in
            let key = try await backendKey(client, fixture.harness)
            let users = try await backendUsers(
                ["ann", "bob"], key: key, signing: signing, client: client, fixture: fixture)
            let created = try await client.json(
                .post, "/v1/server/rooms", token: key.secret,
                body: #"{"name":"R","members":[{"externalId":"ann","role":"admin"}]}"#)
            let roomID = try #require(created.json["id"] as? Int)
            _ = try await client.json(
                .put, "/v1/server/rooms/\(roomID)/members/bob", token: key.secret, body: #"{"role":"reader"}"#)
            let events = try await RecordedEvents.read(fixture.harness.database, roomID: Int64(roomID)).map(\.event)
            guard events.count == 2, case .roomCreated(let made) = events[0],
                case .membersChanged(let added) = events[1]
            else {
                Issue.record("events: \(events)")
                return
            }
            #expect(made.byId == 0 && added.byId == 0 && made.pushed)
            #expect(made.notifiedIds == [try #require(users["ann"]).user.id])
            // Clients read the app's server as the editor 0.
            let delivered = try await RecordedEvents.roomEvents(fixture.harness.database, roomID: Int64(roomID))
            #expect(delivered.allSatisfy { $0.contains(#""editById":0"#) }, "\(delivered)")
            let creator = try await fixture.harness.database.client.query(
                "SELECT created_by_id FROM messenger.chat_room WHERE id = \(roomID)", logger: .quiet
            ).single(Int64?.self)
            #expect(creator == nil)
        }
    }
}
