import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyIdentity
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `POST /v1/auth/token` against a real issuer over HTTPS: the first exchange provisions, later
/// ones refresh, keys rotate, and the answer is the login's.
struct TokenExchangeTests {
    @Test func theFirstExchangeProvisionsAndAnswersAsALogin() async throws {
        let key = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([key]) { client, fixture in
            let token = try fixture.issuer.token(
                key, claims: profileClaims(email: "Ada@Example.com", first: "Ada", last: "Lovelace"))
            let answer = try await client.exchange(token, device: #"{"platform":"ios","name":"Ada's phone"}"#)
            #expect(answer.status == .ok)
            // The login's answer, field for field.
            let login = try await client.signUp()
            let loginAnswer = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"\#(login.user.email ?? "")","password":"correct horse"}"#)
            #expect(Set(answer.json.keys) == Set(loginAnswer.json.keys))
            #expect(
                Set((answer.json["mqtt"] as? [String: Any] ?? [:]).keys)
                    == Set((loginAnswer.json["mqtt"] as? [String: Any] ?? [:]).keys))
            let signedIn = try decode(LoginResponse.self, from: answer.text)
            #expect(signedIn.user.email == "Ada@Example.com")
            #expect(signedIn.user.firstName == "Ada" && signedIn.user.lastName == "Lovelace")
            #expect(signedIn.deviceId != nil)
            #expect(signedIn.mqtt.username == String(signedIn.user.id))
            // The session works as any other.
            let me = try await client.json(.get, "/v1/me", token: signedIn.accessToken)
            #expect(me.status == .ok)
            #expect(try await fixture.counts().identities == 1)
            // No password opens the account the issuer's token made.
            let password = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"ada@example.com","password":"!"}"#)
            #expect(password.status == .unauthorized)
        }
    }

    @Test func laterExchangesRefreshWhatTheClaimsSayAndKeepWhatTheyDoNot() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let first = try await client.exchanged(
                try fixture.issuer.token(key, claims: profileClaims(email: "grace@example.com", first: "Grace")))
            // Names default to the e-mail's local part.
            #expect(first.user.firstName == "Grace" && first.user.lastName == "grace")
            let renamed = try await client.exchanged(
                try fixture.issuer.token(
                    key, claims: profileClaims(email: "grace@navy.example", first: "Grace", last: "Hopper")))
            #expect(renamed.user.id == first.user.id)
            #expect(renamed.user.email == "grace@navy.example" && renamed.user.lastName == "Hopper")
            // No e-mail or names in the token: the stored ones stay.
            let bare = try await client.exchanged(try fixture.issuer.token(key))
            #expect(bare.user.id == first.user.id)
            #expect(bare.user.email == "grace@navy.example")
            #expect(bare.user.firstName == "Grace" && bare.user.lastName == "Hopper")
            #expect(try await fixture.counts().identities == 1)
        }
    }

    @Test func tokensOfEachAlgorithmSignIn() async throws {
        let keys = [try TestIssuer.Key.rsa("r1"), TestIssuer.Key.p256("e1"), TestIssuer.Key.ed25519("d1")]
        try await IssuerFixture.run(keys) { client, fixture in
            for (index, key) in keys.enumerated() {
                let signedIn = try await client.exchanged(
                    try fixture.issuer.token(
                        key, subject: "user-\(index)", claims: profileClaims(email: "u\(index)@example.com")))
                #expect(signedIn.user.email == "u\(index)@example.com", "\(key.algorithm)")
            }
            // One read of the keys for all three, kept as the issuer's Cache-Control says.
            #expect(fixture.issuer.reads == 1)
        }
    }

    @Test func aRotatedKeyIsPickedUpOnceTheKeysMayBeReadAgain() async throws {
        let (old, new) = (try TestIssuer.Key.rsa("2025"), TestIssuer.Key.ed25519("2026"))
        try await IssuerFixture.run([old], maxAge: 3600) { client, fixture in
            let claims = profileClaims(email: "rota@example.com")
            _ = try await client.exchanged(try fixture.issuer.token(old, claims: claims))
            fixture.issuer.publish([old, new], maxAge: 3600)
            // Within the minute after a read, an unknown key id reads nothing.
            fixture.clock.advance(.seconds(30))
            let early = try await client.exchange(try fixture.issuer.token(new, claims: claims))
            #expect(early.status == .unauthorized && early.problem?.code == "invalid-token")
            #expect(fixture.issuer.reads == 1)
            fixture.clock.advance(.seconds(31))
            let rotated = try await client.exchanged(try fixture.issuer.token(new, claims: claims))
            #expect(rotated.user.email == "rota@example.com")
            #expect(fixture.issuer.reads == 2)
            // The old key retired: refused once the keys held are read again.
            fixture.issuer.publish([new], maxAge: 3600)
            fixture.clock.advance(.seconds(3601))
            let retired = try await client.exchange(try fixture.issuer.token(old, claims: claims))
            #expect(retired.status == .unauthorized && retired.problem?.code == "invalid-token")
            #expect(fixture.issuer.reads == 3)
        }
    }

    @Test func theClocksLeewayLetsASlightlyEarlyOrLateTokenIn() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let now = Int(Date().timeIntervalSince1970)
            let early = try await client.exchange(
                try fixture.issuer.token(
                    key, claims: profileClaims(email: "e@example.com").merging(["nbf": "\(now + 30)"]) { $1 }))
            #expect(early.status == .ok)
            let late = try await client.exchange(
                try fixture.issuer.token(
                    key, claims: profileClaims(email: "e@example.com").merging(["exp": "\(now - 30)"]) { $1 }))
            #expect(late.status == .ok)
        }
    }

    @Test func claimNamesComeFromTheIssuersEntry() async throws {
        let key = TestIssuer.Key.p256("e1")
        let entry: (TestIssuer) -> String = { issuer in
            issuer.entry(
                algorithms: ["ES256"], claims: #"{"email":"mail","firstName":"first","lastName":"last"}"#)
        }
        try await IssuerFixture.run([key], entry: entry) { client, fixture in
            let signedIn = try await client.exchanged(
                try fixture.issuer.token(
                    key, claims: ["mail": #""m@example.com""#, "first": #""Mo""#, "last": #""Ng""#]))
            #expect(signedIn.user.email == "m@example.com" && signedIn.user.firstName == "Mo")
            #expect(signedIn.user.lastName == "Ng")
        }
    }

    @Test func keysFromAFileAreReadAgainOnARotation() async throws {
        let (old, new) = (TestIssuer.Key.p256("a"), TestIssuer.Key.p256("b"))
        // Its server is not asked: the keys are read from the file.
        let issuer = try await TestIssuer.start([old])
        let path = TestScratch.path("jwks", suffix: ".json")
        @Sendable func write(_ keys: [TestIssuer.Key]) throws {
            try Data((#"{"keys":["# + keys.map(\.jwk).joined(separator: ",") + "]}").utf8).write(
                to: URL(fileURLWithPath: path))
        }
        try write([old])
        let clock = TestClock()
        var harness = try await APIHarness.make()
        harness.issuers = [
            TrustedIssuer(issuer: issuer.issuer, audience: issuer.audience, keys: .file(path), algorithms: [.es256])
        ]
        harness.issuerKeys = IssuerKeys(fetcher: IssuerKeySources(https: nil), now: { clock.now })
        let outcome = await harness.runCatching { client in
            let claims = profileClaims(email: "file@example.com")
            #expect(try await client.exchange(try issuer.token(old, claims: claims)).status == .ok)
            try write([old, new])
            // Within the minute the file is not read again for an unknown key id.
            let early = try await client.exchange(try issuer.token(new, claims: claims))
            #expect(early.status == .unauthorized)
            clock.advance(.seconds(61))
            #expect(try await client.exchange(try issuer.token(new, claims: claims)).status == .ok)
        }
        await issuer.stop()
        try outcome.get()
        #expect(issuer.reads == 0)
    }
}
