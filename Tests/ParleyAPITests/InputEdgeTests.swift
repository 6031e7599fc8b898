import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ParleyAPI

/// Client input that must get a clear 4xx, never a 500 or a broken room.
struct InputEdgeTests {
    @Test func textIsCountedAsTheDatabaseCountsItAndNULIsRefused() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            // 10,001 thumbs with a skin tone: 10,001 characters, 20,002 code points.
            let long = String(repeating: "👍🏽", count: 10_001)
            let tooLong = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: #"{"content":"\#(long)","uid":"x"}"#)
            #expect(tooLong.status == .badRequest)
            #expect(tooLong.json["field"] as? String == "content")
            let nul = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: #"{"content":"a\u0000b","uid":"y"}"#)
            #expect(nul.status == .badRequest)
            let nulName = try await client.json(
                .patch, "/v1/me", token: token(users[0]), body: #"{"firstName":"A\u0000"}"#)
            #expect(nulName.status == .badRequest)
            let nulLogin = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"a\u0000@example.com","password":"whatever1"}"#)
            #expect(nulLogin.status == .unauthorized)
        }
    }

    @Test func aFileThatIsNotTheSendersIsRefused() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let answer = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]),
                body: #"{"content":"see file","uid":"f","fileId":424242}"#)
            #expect(answer.status == .badRequest)
            #expect(answer.json["code"] as? String == "file-unavailable")
            #expect(answer.json["field"] as? String == "fileId")
        }
    }

    @Test func aTwoPartyRoomCannotBeLeft() async throws {
        try await AccountsHarness.make().run { client in
            let (a, b) = (try await client.signUp(), try await client.signUp())
            let room = try await client.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a))
            let id = room.json["id"] as? Int ?? 0
            let leave = try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(a))", token: token(a))
            #expect(leave.status == .forbidden)
            #expect(try await client.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a)).status == .ok)
        }
    }

    @Test func idsBeyondTheirColumnAreNotFound() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let huge = try await client.json(
                .put, "/v1/rooms/\(id)/app-roles/3000000000", token: token(users[0]), body: #"{"role":"reader"}"#)
            #expect(huge.status == .notFound)
            let overflow = try await client.json(.get, "/v1/rooms/99999999999999999999", token: token(users[0]))
            #expect(overflow.status == .notFound)
        }
    }
}
