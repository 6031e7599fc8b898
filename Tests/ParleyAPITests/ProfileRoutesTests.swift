import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyAPI
import Testing

struct ProfileRoutesTests {
    @Test func meShowsAndChangesTheProfile() async throws {
        try await AccountsHarness.make().run { client in
            let login = try await client.signUp(email: "me@example.com")
            let me = try await client.json(.get, "/v1/me", token: token(login))
            #expect(me.json["email"] as? String == "me@example.com")
            let renamed = try await client.json(
                .patch, "/v1/me", token: token(login), body: #"{"firstName":"Grace","lastName":"Hopper"}"#)
            #expect(renamed.status == .ok)
            #expect(renamed.json["firstName"] as? String == "Grace")
            let empty = try await client.json(.patch, "/v1/me", token: token(login), body: #"{"firstName":" "}"#)
            #expect(empty.json["field"] as? String == "firstName")
            let typed = try await client.json(.patch, "/v1/me", token: token(login), body: #"{"lastName":7}"#)
            #expect(typed.status == .badRequest)
            #expect(typed.json["field"] as? String == "lastName")
        }
    }

    @Test func aPasswordChangeNeedsTheCurrentOneAndEndsOtherSessions() async throws {
        try await AccountsHarness.make().run { client in
            let login = try await client.signUp(email: "pw@example.com")
            let other = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"pw@example.com","password":"correct horse"}"#)
            let missing = try await client.json(
                .patch, "/v1/me", token: token(login), body: #"{"password":"new password 1"}"#)
            #expect(missing.json["field"] as? String == "currentPassword")
            let wrong = try await client.json(
                .patch, "/v1/me", token: token(login),
                body: #"{"password":"new password 1","currentPassword":"not it at all"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.json["code"] as? String == "invalid-credentials")
            let changed = try await client.json(
                .patch, "/v1/me", token: token(login),
                body: #"{"password":"new password 1","currentPassword":"correct horse"}"#)
            #expect(changed.status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: token(other.json)).status == .unauthorized)
            let relogin = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"pw@example.com","password":"new password 1"}"#)
            #expect(relogin.status == .ok)
        }
    }

    @Test func devicesListPushAndDelete() async throws {
        try await AccountsHarness.make().run { client in
            let login = try await client.signUp(
                device: #"{"platform":"ios","name":"phone","pushToken":"apns-1","pushProvider":"apns"}"#)
            let deviceID = try #require(login["deviceId"] as? Int)
            let listed = try await client.json(.get, "/v1/devices", token: token(login))
            let device = try #require((listed.json["devices"] as? [[String: Any]])?.first)
            #expect(device["platform"] as? String == "ios")
            #expect(device["name"] as? String == "phone")
            #expect(device["pushProvider"] as? String == "apns")
            #expect(device["hasPushToken"] as? Bool == true)
            #expect(
                Set(device.keys) == [
                    "id", "platform", "name", "pushProvider", "hasPushToken", "createdAt", "lastSeenAt",
                ])

            let push = try await client.json(
                .put, "/v1/devices/\(deviceID)/push", token: token(login),
                body: #"{"pushToken":"fcm-2","pushProvider":"fcm"}"#)
            #expect(push.status == .noContent)
            let after = try await client.json(.get, "/v1/devices", token: token(login))
            #expect((after.json["devices"] as? [[String: Any]])?.first?["pushProvider"] as? String == "fcm")
            let badProvider = try await client.json(
                .put, "/v1/devices/\(deviceID)/push", token: token(login),
                body: #"{"pushToken":"x","pushProvider":"sms"}"#)
            #expect(badProvider.json["field"] as? String == "pushProvider")

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
        try await AccountsHarness.make().run { client in
            var logins: [[String: Any]] = []
            for index in 0..<3 { logins.append(try await client.signUp(email: "zed\(index)@example.com")) }
            let me = token(logins[0])
            let firstPage = try await client.json(.get, "/v1/users?q=ZED&limit=2", token: me)
            let users = try #require(firstPage.json["users"] as? [[String: Any]])
            #expect(users.count == 2)
            let cursor = try #require(firstPage.json["nextCursor"] as? String)
            let secondPage = try await client.json(.get, "/v1/users?q=zed&limit=2&cursor=\(cursor)", token: me)
            #expect((secondPage.json["users"] as? [[String: Any]])?.count == 1)
            #expect(secondPage.json["nextCursor"] is NSNull)
            let none = try await client.json(.get, "/v1/users?q=%25", token: me)
            #expect((none.json["users"] as? [[String: Any]])?.isEmpty == true)
            let badLimit = try await client.json(.get, "/v1/users?limit=1000", token: me)
            #expect(badLimit.json["field"] as? String == "limit")

            let one = try await client.json(.get, "/v1/users/\(userID(logins[1]))", token: me)
            #expect(one.json["email"] as? String == "zed1@example.com")
            #expect(try await client.json(.get, "/v1/users/999999", token: me).status == .notFound)
            #expect(try await client.json(.get, "/v1/users/abc", token: me).status == .notFound)
            #expect(try await client.json(.get, "/v1/users/1").status == .unauthorized)
        }
    }
}
