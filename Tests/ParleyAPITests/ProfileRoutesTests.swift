import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyTestSupport
import Testing

@testable import ParleyAPI

struct ProfileRoutesTests {
    @Test func meShowsAndChangesTheProfile() async throws {
        try await APIHarness.make().run { client in
            let login = try await client.signUp(email: "me@example.com")
            let me = try await client.decoded(UserResponse.self, .get, "/v1/me", token: token(login))
            #expect(me == login.user && me.email == "me@example.com")
            let renamed = try await client.decoded(
                UserResponse.self, .patch, "/v1/me", token: token(login),
                body: #"{"firstName":"Grace","lastName":"Hopper"}"#)
            #expect(renamed.firstName == "Grace" && renamed.lastName == "Hopper" && renamed.id == me.id)
            let empty = try await client.json(.patch, "/v1/me", token: token(login), body: #"{"firstName":" "}"#)
            #expect(empty.problem?.field == "firstName")
            let typed = try await client.json(.patch, "/v1/me", token: token(login), body: #"{"lastName":7}"#)
            #expect(typed.status == .badRequest)
            #expect(typed.problem?.field == "lastName")
        }
    }

    @Test func aPasswordChangeNeedsTheCurrentOneAndEndsOtherSessions() async throws {
        try await APIHarness.make().run { client in
            let login = try await client.signUp(email: "pw@example.com")
            let other = try await client.decoded(
                LoginResponse.self, .post, "/v1/auth/login",
                body: #"{"email":"pw@example.com","password":"correct horse"}"#)
            let missing = try await client.json(
                .patch, "/v1/me", token: token(login), body: #"{"password":"new password 1"}"#)
            #expect(missing.problem?.field == "currentPassword")
            let wrong = try await client.json(
                .patch, "/v1/me", token: token(login),
                body: #"{"password":"new password 1","currentPassword":"not it at all"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.problem?.code == "invalid-credentials")
            let changed = try await client.json(
                .patch, "/v1/me", token: token(login),
                body: #"{"password":"new password 1","currentPassword":"correct horse"}"#)
            #expect(changed.status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: token(other)).status == .unauthorized)
            let relogin = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"pw@example.com","password":"new password 1"}"#)
            #expect(relogin.status == .ok)
        }
    }

    @Test func devicesListPushAndDelete() async throws {
        try await APIHarness.make().run { client in
            let login = try await client.signUp(
                device: #"{"platform":"ios","name":"phone","pushToken":"apns-1","pushProvider":"apns"}"#)
            let deviceID = try #require(login.deviceId)
            let listed = try await client.decoded(DevicesResponse.self, .get, "/v1/devices", token: token(login))
            let device = try #require(listed.devices.first)
            #expect(device.id == deviceID && device.platform == .ios && device.name == "phone")
            #expect(device.pushProvider == .apns && device.hasPushToken)
            // Every key is there, null or not.
            let raw = try await client.decoded([String: [WireKeys]].self, .get, "/v1/devices", token: token(login))
            #expect(
                raw["devices"]?.first?.keys == [
                    "id", "platform", "name", "pushProvider", "hasPushToken", "createdAt", "lastSeenAt",
                ])

            let push = try await client.json(
                .put, "/v1/devices/\(deviceID)/push", token: token(login),
                body: #"{"pushToken":"fcm-2","pushProvider":"fcm"}"#)
            #expect(push.status == .noContent)
            let after = try await client.decoded(DevicesResponse.self, .get, "/v1/devices", token: token(login))
            #expect(after.devices.first?.pushProvider == .fcm)
            let badProvider = try await client.json(
                .put, "/v1/devices/\(deviceID)/push", token: token(login),
                body: #"{"pushToken":"x","pushProvider":"sms"}"#)
            #expect(badProvider.problem?.field == "pushProvider")

            let stranger = try await client.signUp()
            #expect(
                try await client.json(.delete, "/v1/devices/\(deviceID)", token: token(stranger)).status == .notFound)
            #expect(
                try await client.json(
                    .put, "/v1/devices/\(deviceID)/push", token: token(stranger),
                    body: #"{"pushToken":"y","pushProvider":"fcm"}"#
                ).status == .notFound)

            #expect(try await client.json(.delete, "/v1/devices/\(deviceID)", token: token(login)).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .unauthorized)
        }
    }

    @Test func usersAreFoundByNamePrefixAndPaged() async throws {
        try await APIHarness.make().run { client in
            var logins: [LoginResponse] = []
            for index in 0..<3 { logins.append(try await client.signUp(email: "zed\(index)@example.com")) }
            let me = token(logins[0])
            // Names by their start, paged; others' e-mail addresses are not shown.
            let pages = try await client.pages(ListPage<UserResponse>.self, "/v1/users?q=TES&limit=2", token: me) {
                ($0.items.map(\.id), $0.nextCursor)
            }
            #expect(pages.map(\.count) == [2, 1])
            #expect(Set(pages.joined()) == Set(logins.map(userID)))
            let listed = try await client.json(.get, "/v1/users?q=Test", token: me)
            let entries = try decode(ListPage<UserResponse>.self, from: listed.text).items
            #expect(entries.count == 3)
            // Left out, not null: the keys as sent.
            struct Sent: Decodable { let users: [WireKeys] }
            let sent = try decode(Sent.self, from: listed.text).users
            #expect(zip(entries, sent).filter { $1.keys.contains("email") }.map(\.0.id) == [userID(logins[0])])
            // An e-mail address is found only whole.
            #expect(
                try await client.decoded(ListPage<UserResponse>.self, .get, "/v1/users?q=zed", token: me).items.isEmpty)
            let whole = try await client.decoded(
                ListPage<UserResponse>.self, .get, "/v1/users?q=ZED1@example.com", token: me)
            #expect(whole.items.map(\.id) == [userID(logins[1])])
            let none = try await client.decoded(ListPage<UserResponse>.self, .get, "/v1/users?q=%25", token: me)
            #expect(none.items.isEmpty && none.nextCursor == nil)
            let badLimit = try await client.json(.get, "/v1/users?limit=1000", token: me)
            #expect(badLimit.problem?.field == "limit")

            let one = try await client.decoded(UserResponse.self, .get, "/v1/users/\(userID(logins[1]))", token: me)
            #expect(one.id == logins[1].user.id && one.email == nil && one.firstName == logins[1].user.firstName)
            #expect(try await client.json(.get, "/v1/users/999999", token: me).status == .notFound)
            #expect(try await client.json(.get, "/v1/users/abc", token: me).status == .notFound)
            #expect(try await client.json(.get, "/v1/users/1").status == .unauthorized)
        }
    }
}
