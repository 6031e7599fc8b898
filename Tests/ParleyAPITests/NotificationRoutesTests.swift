import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ParleyAPI

/// `/v1/rooms/{id}/notifications` and `/v1/me/quiet-hours`.
struct NotificationRoutesTests {
    @Test func aMemberMutesARoomForeverOrUntilATimeAndUnmutes() async throws {
        try await APIHarness.make().run { client in
            let (roomID, users) = try await client.roomOfThree()
            let path = "/v1/rooms/\(roomID)/notifications"
            let initial = try await client.json(.get, path, token: token(users[1]))
            #expect(initial.status == .ok)
            #expect(initial.text == #"{"level":"all","muted":false,"mutedUntil":null,"overrideQuietHours":false}"#)

            let forever = try await client.json(.put, path, token: token(users[1]), body: #"{"muted":true}"#)
            #expect(forever.status == .ok)
            #expect(forever.json["muted"] as? Bool == true)
            #expect(forever.json["mutedUntil"] is NSNull)
            let read = try await client.json(.get, path, token: token(users[1]))
            #expect(read.json["muted"] as? Bool == true)
            #expect(read.json["mutedUntil"] is NSNull)

            let until = "2099-01-02T03:04:05.000Z"
            let timed = try await client.json(
                .put, path, token: token(users[1]),
                body: #"{"muted":true,"mutedUntil":"\#(until)","overrideQuietHours":true}"#)
            #expect(timed.status == .ok)
            let timedRead = try await client.json(.get, path, token: token(users[1]))
            #expect(timedRead.json["mutedUntil"] as? String == until)
            #expect(timedRead.json["overrideQuietHours"] as? Bool == true)

            // One member's settings are not another's.
            let other = try await client.json(.get, path, token: token(users[2]))
            #expect(other.json["muted"] as? Bool == false)

            #expect(try await client.json(.put, path, token: token(users[1]), body: #"{"muted":false}"#).status == .ok)
            let unmuted = try await client.json(.get, path, token: token(users[1]))
            #expect(unmuted.json["muted"] as? Bool == false)
            #expect(unmuted.json["overrideQuietHours"] as? Bool == false)
        }
    }

    @Test func invalidMutesAreRefusedAndOutsidersSeeNothing() async throws {
        try await APIHarness.make().run { client in
            let (roomID, users) = try await client.roomOfThree()
            let path = "/v1/rooms/\(roomID)/notifications"
            let past = try await client.json(
                .put, path, token: token(users[1]), body: #"{"muted":true,"mutedUntil":"2001-01-01T00:00:00.000Z"}"#)
            #expect(past.status == .badRequest)
            #expect(past.problem?.field == "mutedUntil")
            let contradictory = try await client.json(
                .put, path, token: token(users[1]), body: #"{"muted":false,"mutedUntil":"2099-01-01T00:00:00.000Z"}"#)
            #expect(contradictory.status == .badRequest)
            #expect(try await client.json(.put, path, token: token(users[1]), body: "{}").status == .badRequest)

            let outsider = try await client.signUp()
            #expect(try await client.json(.get, path, token: token(outsider)).status == .notFound)
            #expect(
                try await client.json(.put, path, token: token(outsider), body: #"{"muted":true}"#).status == .notFound)
            #expect(try await client.json(.get, path).status == .unauthorized)
        }
    }

    @Test func quietHoursAreSetReadAndCleared() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let path = "/v1/me/quiet-hours"
            let off = try await client.json(.get, path, token: token(user))
            #expect(off.json["enabled"] as? Bool == false)
            for key in ["start", "end", "timeZone"] { #expect(off.json[key] is NSNull, "\(key)") }

            let set = try await client.json(
                .put, path, token: token(user), body: #"{"start":"22:30","end":"07:00","timeZone":"Europe/Prague"}"#)
            #expect(set.status == .ok)
            let read = try await client.json(.get, path, token: token(user))
            #expect(read.json["enabled"] as? Bool == true)
            #expect(read.json["start"] as? String == "22:30")
            #expect(read.json["end"] as? String == "07:00")
            #expect(read.json["timeZone"] as? String == "Europe/Prague")
            // The name given comes back, also where Foundation's identifier differs (GMT).
            let utc = #"{"start":"22:30","end":"07:00","timeZone":"UTC"}"#
            #expect(
                try await client.json(.put, path, token: token(user), body: utc).json["timeZone"] as? String == "UTC")
            #expect(try await client.json(.get, path, token: token(user)).json["timeZone"] as? String == "UTC")

            #expect(try await client.json(.delete, path, token: token(user)).status == .noContent)
            #expect(try await client.json(.get, path, token: token(user)).json["enabled"] as? Bool == false)
        }
    }

    @Test func invalidQuietHoursNameTheField() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let cases = [
                (#"{"start":"25:00","end":"07:00","timeZone":"UTC"}"#, "start"),
                (#"{"start":"22:00","end":"7:00","timeZone":"UTC"}"#, "end"),
                (#"{"start":"22:00","end":"22:00","timeZone":"UTC"}"#, "end"),
                (#"{"start":"22:00","end":"07:00","timeZone":"Mars/Olympus"}"#, "timeZone"),
            ]
            for (body, field) in cases {
                let answer = try await client.json(.put, "/v1/me/quiet-hours", token: token(user), body: body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect(answer.problem?.field == field, "\(body)")
            }
        }
    }
}
