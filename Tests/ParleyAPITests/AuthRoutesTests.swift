import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

struct AuthRoutesTests {
    @Test func registerAnswersTheUserAndRefusesATakenEmail() async throws {
        try await APIHarness.make().run { client in
            let body =
                #"{"email":"Ada@Example.com","password":"correct horse","firstName":"Ada","lastName":"Lovelace"}"#
            let created = try await client.json(.post, "/v1/auth/register", body: body)
            #expect(created.status == .created)
            #expect(Set(created.json.keys) == ["id", "email", "firstName", "lastName", "createdAt", "avatar"])
            #expect(created.json["firstName"] as? String == "Ada")
            let createdAt = created.json["createdAt"] as? String ?? ""
            #expect(createdAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)

            let again = try await client.json(
                .post, "/v1/auth/register", body: body.replacingOccurrences(of: "Ada@", with: "ada@"))
            #expect(again.status == .conflict)
            #expect(again.problem?.code == "email-taken")
            #expect(again.headers[.contentType] == "application/problem+json")
        }
    }

    @Test(arguments: [
        (#"{"password":"correct horse","firstName":"A","lastName":"B"}"#, "email"),
        (#"{"email":"a@b.io","password":12345678,"firstName":"A","lastName":"B"}"#, "password"),
        (#"{"email":"a@b.io","password":"short","firstName":"A","lastName":"B"}"#, "password"),
        (#"{"email":"not-an-email","password":"correct horse","firstName":"A","lastName":"B"}"#, "email"),
        (#"{"email":"a@b.io","password":"correct horse","firstName":"","lastName":"B"}"#, "firstName"),
        (#"{"email":"a@b.io","password":"correct horse","firstName":"A","lastName":null}"#, "lastName"),
    ])
    func registerNamesTheFieldThatIsWrong(body: String, field: String) async throws {
        try await APIHarness.make().run { client in
            let answer = try await client.json(.post, "/v1/auth/register", body: body)
            #expect(answer.status == .badRequest)
            #expect(answer.problem?.code == "invalid-request")
            #expect(answer.problem?.field == field)
        }
    }

    @Test func malformedAndOversizedBodiesAreRefused() async throws {
        try await APIHarness.make().run { client in
            let malformed = try await client.json(.post, "/v1/auth/login", body: #"{"email": "#)
            #expect(malformed.status == .badRequest)
            #expect(malformed.problem?.code == "invalid-request")
            let huge = #"{"email":"a@b.io","password":""# + String(repeating: "x", count: 70_000) + #""}"#
            let oversized = try await client.json(.post, "/v1/auth/login", body: huge)
            #expect(oversized.status == .contentTooLarge)
            #expect(oversized.problem?.code == "too-large")
        }
    }

    @Test func registrationCanBeClosed() async throws {
        try await APIHarness.make(policy: AccountPolicy(registrationOpen: false)).run { client in
            let answer = try await client.json(
                .post, "/v1/auth/register",
                body: #"{"email":"a@b.io","password":"correct horse","firstName":"A","lastName":"B"}"#)
            #expect(answer.status == .forbidden)
            #expect(answer.problem?.code == "registration-closed")
        }
    }

    @Test func loginAnswersTokensAndVerifiableMQTTCredentials() async throws {
        try await APIHarness.make().run { client in
            let asked = ContinuousClock.now
            let login = try await client.signUp(
                device: #"{"platform":"ios","name":"Ada's phone","pushToken":"abc123","pushProvider":"apns"}"#)
            // The lifetime less the time the sign-up took (seconds on a machine busy with
            // other work), never more.
            let took = Int((ContinuousClock.now - asked).components.seconds) + 1
            #expect(((3600 - took)...3600).contains(login.expiresIn))
            #expect(login.accessToken.count >= 22)
            #expect(login.refreshToken.count >= 22)
            #expect(login.deviceId != nil)
            let mqtt = login.mqtt
            #expect(mqtt.host == "mqtt.example.test")
            #expect(mqtt.port == 8883)
            #expect(mqtt.tls == true)
            #expect(mqtt.websocketPort == 8083)
            #expect(mqtt.username == String(userID(login)))
            let verified = try MQTTToken.verify(mqtt.password, key: APIHarness.mqttKey)
            #expect(verified.userID == userID(login))
            #expect(verified.clientID == mqtt.clientId)
            #expect(verified.expiresAt > Int64(Date().timeIntervalSince1970) + 3600)
        }
    }

    @Test func anUnknownEmailAndAWrongPasswordAnswerAlike() async throws {
        try await APIHarness.make().run { client in
            _ = try await client.signUp(email: "known@example.com")
            let wrong = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"known@example.com","password":"wrong password"}"#)
            let unknown = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"nobody@example.com","password":"wrong password"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.problem?.code == "invalid-credentials")
            #expect(wrong.text == unknown.text)
            #expect(wrong.status == unknown.status)
        }
    }

    @Test func loginIsRateLimitedPerEmailAndRecovers() async throws {
        let policy = AccountPolicy(loginLimitPerEmail: 2, rateLimitWindow: .seconds(4))
        try await APIHarness.make(policy: policy).run { client in
            _ = try await client.json(
                .post, "/v1/auth/register",
                body: #"{"email":"limited@example.com","password":"correct horse","firstName":"L","lastName":"M"}"#)
            let attempt = #"{"email":"limited@example.com","password":"wrong password"}"#
            // Windows are fixed: attempts straddling a boundary may take a few more to hit the limit.
            var statuses: [HTTPResponse.Status] = []
            var retryAfter: String?
            for _ in 0..<12 where retryAfter == nil {
                let answer = try await client.json(.post, "/v1/auth/login", body: attempt)
                statuses.append(answer.status)
                if answer.status == .tooManyRequests {
                    retryAfter = answer.headers[.retryAfter]
                    #expect(answer.problem?.code == "rate-limited")
                }
            }
            #expect(statuses.prefix(2).allSatisfy { $0 == .unauthorized })
            #expect(Set(statuses).isSubset(of: [.unauthorized, .tooManyRequests]))
            let seconds = try #require(retryAfter.flatMap(Int.init))
            #expect((1...4).contains(seconds))
            try await Task.sleep(for: .seconds(seconds) + .milliseconds(200))
            let good = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"limited@example.com","password":"correct horse"}"#)
            #expect(good.status == .ok)
        }
    }

    @Test func registrationIsRateLimitedPerClientAddress() async throws {
        try await APIHarness.make(policy: AccountPolicy(registerLimitPerAddress: 2)).run { client in
            // Fixed windows: a window may end between two attempts, so keep going (boundedly)
            // until the limit is hit; it is hit on the third attempt of a window, never sooner.
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<8 where statuses.last != .tooManyRequests {
                let answer = try await client.json(
                    .post, "/v1/auth/register",
                    body:
                        #"{"email":"r\#(index)@example.com","password":"correct horse","firstName":"R","lastName":"S"}"#
                )
                statuses.append(answer.status)
            }
            #expect(statuses.last == .tooManyRequests, "\(statuses)")
            #expect(statuses.dropLast().suffix(2) == [.created, .created], "\(statuses)")
            #expect(Set(statuses.dropLast()) == [.created], "\(statuses)")
        }
    }

    @Test func aDeviceNeedsAKnownPlatformAndAProviderForItsToken() async throws {
        try await APIHarness.make().run { client in
            _ = try await client.signUp(email: "dev@example.com")
            let badPlatform = try await client.json(
                .post, "/v1/auth/login",
                body: #"{"email":"dev@example.com","password":"correct horse","device":{"platform":"palm"}}"#)
            #expect(badPlatform.status == .badRequest)
            #expect(badPlatform.problem?.field == "device.platform")
            let noProvider = try await client.json(
                .post, "/v1/auth/login",
                body:
                    #"{"email":"dev@example.com","password":"correct horse","device":{"platform":"ios","pushToken":"t"}}"#
            )
            #expect(noProvider.problem?.field == "device.pushProvider")
        }
    }
}
