import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ParleyAPI

/// Client input that must get a clear 4xx, never a 500 or a broken room.
struct InputEdgeTests {
    @Test func textIsCountedAsTheDatabaseCountsItAndNULIsRefused() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            // 10,001 thumbs with a skin tone: 10,001 characters, 20,002 code points.
            let long = String(repeating: "👍🏽", count: 10_001)
            let tooLong = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: #"{"content":"\#(long)","uid":"x"}"#)
            #expect(tooLong.status == .badRequest)
            #expect(tooLong.problem?.field == "content")
            let nul = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: #"{"content":"a\u0000b","uid":"y"}"#)
            #expect(nul.status == .badRequest)
            let nulName = try await client.json(
                .patch, "/v1/me", token: token(users[0]), body: #"{"firstName":"A\u0000"}"#)
            #expect(nulName.status == .badRequest)
            let nulLogin = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"a\u0000@example.com","password":"whatever1"}"#)
            #expect(nulLogin.status == .badRequest)
        }
    }

    /// The five places a NUL once reached PostgreSQL and answered 500.
    @Test func aNULIsRefusedInEveryTextInput() async throws {
        try await APIHarness.make().run { client in
            let email = "nul-\(UUID().uuidString.prefix(8))@example.com"
            let user = try await client.signUp(
                email: email, device: #"{"platform":"ios","name":"phone","pushToken":"apns-1","pushProvider":"apns"}"#)
            let deviceID = try #require(user.deviceId)
            let search = try await client.json(.get, "/v1/users?q=%00", token: token(user))
            #expect(search.status == .badRequest && search.problem?.field == "q")
            let push = try await client.json(
                .put, "/v1/devices/\(deviceID)/push", token: token(user),
                body: #"{"pushToken":"a\u0000b","pushProvider":"fcm"}"#)
            #expect(push.status == .badRequest && push.problem?.field == "pushToken")
            let quiet = try await client.json(
                .put, "/v1/me/quiet-hours", token: token(user),
                body: #"{"start":"22:30","end":"07:00","timeZone":"Europe/\u0000Prague"}"#)
            #expect(quiet.status == .badRequest && quiet.problem?.field == "timeZone")
            for device in [
                #"{"platform":"ios","name":"a\u0000","pushToken":"t","pushProvider":"apns"}"#,
                #"{"platform":"ios","name":"a","pushToken":"t\u0000","pushProvider":"apns"}"#,
            ] {
                let login = try await client.json(
                    .post, "/v1/auth/login",
                    body: #"{"email":"\#(email)","password":"correct horse","device":\#(device)}"#)
                #expect(login.status == .badRequest, "\(device)")
                #expect((login.problem?.field)?.hasPrefix("device.") == true)
                #expect(login.headers[.contentType] == "application/problem+json")
            }
        }
    }

    /// `{"role":"reader","role":"writer"}` made a reader where JavaScript and Python read a writer.
    @Test func duplicateKeysAndBodiesThatAreNotJSONAreRefused() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let member = userID(users[1])
            let twice = try await client.json(
                .put, "/v1/rooms/\(id)/members/\(member)", token: token(users[0]),
                body: #"{"role":"reader","role":"writer"}"#)
            #expect(twice.status == .badRequest && twice.problem?.field == "role")
            let escaped = try await client.json(
                .put, "/v1/rooms/\(id)/members/\(member)", token: token(users[0]),
                body: #"{"role":"reader","\u0072ole":"writer"}"#)
            #expect(escaped.status == .badRequest)
            for type in ["text/plain", nil] {
                var headers: HTTPFields = [.authorization: "Bearer \(token(users[0]))"]
                headers[.contentType] = type
                let status = try await client.execute(
                    uri: "/v1/rooms/\(id)/messages", method: .post, headers: headers,
                    body: ByteBuffer(string: #"{"content":"x","uid":"plain"}"#)
                ) { $0.status }
                #expect(status == .unsupportedMediaType, "\(type ?? "no content type")")
            }
            let charset = try await client.execute(
                uri: "/v1/rooms/\(id)/messages", method: .post,
                headers: [
                    .authorization: "Bearer \(token(users[0]))", .contentType: "Application/JSON; charset=utf-8",
                ],
                body: ByteBuffer(string: #"{"content":"x","uid":"charset"}"#)
            ) { $0.status }
            #expect(charset == .created)
        }
    }

    @Test func aFileThatIsNotTheSendersIsRefused() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let answer = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[0]),
                body: #"{"content":"see file","uid":"f","fileId":424242}"#)
            #expect(answer.status == .badRequest)
            #expect(answer.problem?.code == "file-unavailable")
            #expect(answer.problem?.field == "fileId")
        }
    }

    @Test func aTwoPartyRoomCannotBeLeft() async throws {
        try await APIHarness.make().run { client in
            let (a, b) = (try await client.signUp(), try await client.signUp())
            let room = try await client.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a))
            let id = room.json["id"] as? Int ?? 0
            let leave = try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(a))", token: token(a))
            #expect(leave.status == .forbidden)
            #expect(try await client.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a)).status == .ok)
        }
    }

    @Test func idsBeyondTheirColumnAreNotFound() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            // Linking application roles needs a system administrator (anyone else: 403 first).
            let admin = try await AdminRoutesTests().promote(users[0], client, harness)
            let huge = try await client.json(
                .put, "/v1/rooms/\(id)/app-roles/3000000000", token: admin, body: #"{"role":"reader"}"#)
            #expect(huge.status == .notFound)
            let overflow = try await client.json(.get, "/v1/rooms/99999999999999999999", token: token(users[0]))
            #expect(overflow.status == .notFound)
        }
    }
}
