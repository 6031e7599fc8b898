import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `POST /v1/server/rooms/{id}/messages`: the app's backend posts room notices (no sender) and
/// sends as its users, with their rights.
struct ServerMessageTests {
    @Test func aSystemNoticeHasNoSenderAndItsUIDIsTheServersRetryKey() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, users) = try await client.roomOfThree()
            let key = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["messages:write"]}"#)
            let body =
                #"{"sentBy":"system","content":"Ada joined the project","uid":"n-1","metadata":{"event":"join"}}"#
            let posted = try await client.json(
                .post, "/v1/server/rooms/\(roomID)/messages", token: key.secret, body: body)
            #expect(posted.status == .created, "\(posted.text)")
            let notice = try decode(Message.self, from: posted.text)
            #expect(notice.type == .system && notice.sentById == nil && notice.seq == 2)
            #expect(notice.metadata?.members == ["event": .string("join")])
            #expect(posted.json["sentById"] is NSNull)
            let again = try await client.json(
                .post, "/v1/server/rooms/\(roomID)/messages", token: key.secret, body: body)
            #expect(again.status == .ok)
            #expect(try decode(Message.self, from: again.text).id == notice.id)
            let history = try await client.history(roomID, as: users[2]).messages
            #expect(history.map(\.uid) == ["first", "n-1"] && history.last?.type == .system)
            // A user's message with the same uid is another message.
            let mine = try await client.send("hi", uid: "n-1", to: roomID, as: users[1])
            #expect(mine.id != notice.id && mine.seq == 3)
            // A notice in a room that does not exist.
            let missing = try await client.json(
                .post, "/v1/server/rooms/999999999/messages", token: key.secret, body: body)
            #expect(missing.status == .notFound)
        }
    }

    @Test(arguments: [
        (#"{"sentBy":"system","content":"x","uid":"u","attachments":[1]}"#, "attachments"),
        (#"{"sentBy":"system","content":"x","uid":"u","mentions":[1]}"#, "mentions"),
        (#"{"sentBy":"system","content":"x","uid":"u","type":"x-card"}"#, "type"),
        (#"{"sentBy":"system","content":"","uid":"u"}"#, "content"),
        (#"{"sentBy":"everyone","content":"x","uid":"u"}"#, "sentBy"),
        (#"{"content":"x","uid":"u"}"#, "sentBy"),
        (#"{"sentBy":{"externalId":"a"},"content":"x","uid":"u","type":"system"}"#, "type"),
    ])
    func aServerMessageBeyondTheContractIsRefusedNamingItsField(_ body: String, _ field: String) async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, users) = try await client.roomOfThree()
            let key = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["messages:write"]}"#)
            let answer = try await client.json(
                .post, "/v1/server/rooms/\(roomID)/messages", token: key.secret, body: body)
            #expect(answer.status == .badRequest && answer.problem?.field == field, "\(answer.text)")
            #expect(try await client.history(roomID, as: users[0]).messages.count == 1)
        }
    }

    @Test func aMessageSentAsAUserHasThatUsersRights() async throws {
        let signing = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([signing]) { client, fixture in
            let admin = try await AdminRoutesTests().signUpAdmin(client, fixture.harness)
            let key = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["users:write","messages:write"]}"#)
            var logins: [String: LoginResponse] = [:]
            for name in ["writer", "reader", "stranger"] {
                let email = "\(name)-\(UUID().uuidString.prefix(6))@example.com"
                let made = try await client.json(
                    .put, "/v1/server/users/\(name)", token: key.secret, body: #"{"email":"\#(email)"}"#)
                #expect(made.status == .created, "\(made.text)")
                // The backend's user signs in with its issuer's token for the same subject.
                let token = try fixture.issuer.token(signing, subject: name, claims: profileClaims(email: email))
                logins[name] = try decode(LoginResponse.self, from: try await client.exchange(token).text)
            }
            let creator = try await client.signUp()
            let room = try await client.multipartyRoom(
                by: creator,
                members: [(try #require(logins["writer"]), "writer"), (try #require(logins["reader"]), "reader")])
            func send(_ externalID: String, uid: String) async throws -> JSONAnswer {
                try await client.json(
                    .post, "/v1/server/rooms/\(room.id)/messages", token: key.secret,
                    body: #"{"sentBy":{"externalId":"\#(externalID)"},"content":"from the backend","uid":"\#(uid)"}"#)
            }
            let sent = try await send("writer", uid: "w-1")
            #expect(sent.status == .created, "\(sent.text)")
            #expect(try decode(Message.self, from: sent.text).sentById == logins["writer"]?.user.id)
            #expect(try await send("writer", uid: "w-1").status == .ok)
            #expect(try await send("reader", uid: "r-1").problem?.code == "forbidden")
            #expect(try await send("stranger", uid: "s-1").status == .forbidden)
            #expect(try await send("nobody", uid: "n-1").status == .notFound)
        }
    }
}
