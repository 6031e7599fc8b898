import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyIdentity
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Every refused token answers 401 `invalid-token` and provisions nothing; a wrong request is
/// 400, an issuer whose keys cannot be read 503, and the routes follow the settings.
struct TokenRefusalTests {
    /// A refused token by name, made from the issuer, its trusted key and a key of the
    /// issuer's set of an algorithm it is not trusted for.
    typealias Make = @Sendable (TestIssuer, TestIssuer.Key, TestIssuer.Key) throws -> String

    static let claims = profileClaims(email: "mallory@example.com", first: "M", last: "A", verified: true)
    static func at(_ offset: Int) -> String { "\(Int(Date().timeIntervalSince1970) + offset)" }

    static let refused: [(String, Make)] = [
        ("a bad signature", { issuer, key, _ in try issuer.token(try .rsa(key.kid), claims: claims) }),
        ("expired", { issuer, key, _ in try issuer.token(key, claims: claims.merging(["exp": at(-61 - 5)]) { $1 }) }),
        (
            "not yet valid",
            { issuer, key, _ in try issuer.token(key, claims: claims.merging(["nbf": at(61 + 5)]) { $1 }) }
        ),
        (
            "of another issuer",
            { issuer, key, _ in try issuer.token(key, claims: claims.merging(["iss": #""https://evil.test""#]) { $1 }) }
        ),
        (
            "for another audience",
            { issuer, key, _ in try issuer.token(key, claims: claims.merging(["aud": #""another-app""#]) { $1 }) }
        ),
        (
            "alg none",
            { issuer, key, _ in
                let parts = try issuer.token(key, claims: claims, algorithm: "none").split(separator: ".")
                return parts[0...1].joined(separator: ".") + "."
            }
        ),
        (
            "HS256 keyed with the issuer's public key",
            { issuer, key, _ in
                let parts = try issuer.token(key, claims: claims, algorithm: "HS256").split(separator: ".")
                let input = parts[0...1].joined(separator: ".")
                let mac = HMAC<SHA256>.authenticationCode(
                    for: Data(input.utf8), using: SymmetricKey(data: Data(key.jwk.utf8)))
                return input + "." + Base64URL.encode(Array(mac))
            }
        ),
        ("an algorithm the issuer does not allow", { issuer, _, other in try issuer.token(other, claims: claims) }),
        ("an unknown kid", { issuer, _, _ in try issuer.token(try .rsa("nobody"), claims: claims) }),
        (
            "over 16 KiB",
            { issuer, key, _ in
                try issuer.token(
                    key, claims: claims.merging(["pad": "\"" + String(repeating: "x", count: 16_384) + "\""]) { $1 })
            }
        ),
        ("without subject", { issuer, key, _ in try issuer.token(key, claims: claims.merging(["sub": "-"]) { $1 }) }),
        ("without e-mail for a new user", { issuer, key, _ in try issuer.token(key) }),
        ("not a JWT", { _, _, _ in "not.a.jwt" }),
    ]

    @Test func everyRefusedTokenIs401InvalidTokenAndProvisionsNothing() async throws {
        let (trusted, untrusted) = (try TestIssuer.Key.rsa("r1"), TestIssuer.Key.p256("e1"))
        // Allowed RS256 and EdDSA only: the P-256 key is in the set but not trusted.
        try await IssuerFixture.run([trusted, untrusted], algorithms: ["RS256", "EdDSA"]) { client, fixture in
            let before = try await fixture.counts()
            for (name, make) in Self.refused {
                let answer = try await client.exchange(try make(fixture.issuer, trusted, untrusted))
                #expect(answer.status == .unauthorized, "\(name): \(answer.text)")
                #expect(answer.problem?.code == "invalid-token", "\(name)")
                #expect(answer.headers[.contentType] == "application/problem+json", "\(name)")
                // The reason is the log's, not the client's.
                #expect(answer.problem?.detail == "The subject token is not valid here.", "\(name)")
            }
            let after = try await fixture.counts()
            #expect(after.users == before.users && after.identities == 0)
            // The same claims, properly signed, pass: the refusals were the token's.
            #expect(try await client.exchange(try fixture.issuer.token(trusted, claims: Self.claims)).status == .ok)
        }
    }

    @Test(arguments: [
        (
            #"{"grantType":"password","subjectTokenType":"urn:ietf:params:oauth:token-type:jwt","subjectToken":"x"}"#,
            "grantType"
        ),
        (#"{"subjectTokenType":"urn:ietf:params:oauth:token-type:jwt","subjectToken":"x"}"#, "grantType"),
        (
            #"{"grantType":"urn:ietf:params:oauth:grant-type:token-exchange","subjectTokenType":"urn:ietf:params:oauth:token-type:access_token","subjectToken":"x"}"#,
            "subjectTokenType"
        ),
        (
            #"{"grantType":"urn:ietf:params:oauth:grant-type:token-exchange","subjectTokenType":"urn:ietf:params:oauth:token-type:jwt"}"#,
            "subjectToken"
        ),
        (
            #"{"grantType":"urn:ietf:params:oauth:grant-type:token-exchange","subjectTokenType":"urn:ietf:params:oauth:token-type:jwt","subjectToken":""}"#,
            "subjectToken"
        ),
    ])
    func aWrongExchangeRequestIs400(body: String, field: String) async throws {
        try await IssuerFixture.run([TestIssuer.Key.p256("e1")]) { client, fixture in
            let answer = try await client.json(.post, "/v1/auth/token", body: body)
            #expect(answer.status == .badRequest)
            #expect(answer.problem?.code == "invalid-request" && answer.problem?.field == field)
            #expect(fixture.issuer.reads == 0)
        }
    }

    @Test func anEmailOfAPasswordAccountIsTakenUnlessVerifiedAndLinkingIsOn() async throws {
        for (link, verified, linked) in [(false, true, false), (true, false, false), (true, true, true)] {
            let key = TestIssuer.Key.ed25519("d1")
            try await IssuerFixture.run([key], linkVerifiedEmail: link) { client, fixture in
                let registered = try await client.signUp(email: "owner@example.com")
                let token = try fixture.issuer.token(
                    key, claims: profileClaims(email: "Owner@example.com", first: "O", verified: verified))
                let answer = try await client.exchange(token)
                if linked {
                    let signedIn = try decode(LoginResponse.self, from: answer.text)
                    #expect(answer.status == .ok && signedIn.user.id == registered.user.id)
                    #expect(signedIn.user.firstName == "O")
                    // The password still opens the account.
                    let login = try await client.json(
                        .post, "/v1/auth/login", body: #"{"email":"owner@example.com","password":"correct horse"}"#)
                    #expect(login.status == .ok)
                } else {
                    #expect(answer.status == .conflict, "link \(link), verified \(verified)")
                    #expect(answer.problem?.code == "email-taken")
                }
                let counts = try await fixture.counts()
                #expect(counts.users == 1 && counts.identities == (linked ? 1 : 0))
            }
        }
    }

    @Test func anIssuerWhoseKeysCannotBeReadIs503AndProvisionsNothing() async throws {
        let key = TestIssuer.Key.p256("e1")
        // Nothing listens at the keys' address.
        let entry: (TestIssuer) -> String = { issuer in
            issuer.entry(algorithms: ["ES256"]).replacingOccurrences(
                of: issuer.jwksURL, with: "https://localhost:1/jwks")
        }
        try await IssuerFixture.run([key], entry: entry) { client, fixture in
            let answer = try await client.exchange(
                try fixture.issuer.token(key, claims: profileClaims(email: "x@example.com")))
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.problem?.code == "unavailable")
            #expect(answer.headers[.retryAfter] != nil)
            #expect(try await fixture.counts().users == 0)
            // A forged token is still a forgery: refused before any key is read.
            let none = try await client.exchange(
                try fixture.issuer.token(key, claims: profileClaims(email: "x@example.com"), algorithm: "none"))
            #expect(none.status == .unauthorized)
        }
    }

    @Test func aKeyDocumentTooLargeOrNotOneIs503() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let token = try fixture.issuer.token(key, claims: profileClaims(email: "x@example.com"))
            fixture.issuer.publish(raw: #"{"keys": []}"# + String(repeating: " ", count: 300 * 1024))
            let large = try await client.exchange(token)
            #expect(large.status == .serviceUnavailable && large.problem?.code == "unavailable")
            // The failed read is not repeated at once; after the pause, the next answer is read.
            fixture.issuer.publish(raw: "<html>not keys</html>")
            fixture.clock.advance(.seconds(6))
            let notKeys = try await client.exchange(token)
            #expect(notKeys.status == .serviceUnavailable)
            #expect(fixture.issuer.reads == 2)
            fixture.issuer.publish([key])
            fixture.clock.advance(.seconds(6))
            #expect(try await client.exchange(token).status == .ok)
        }
    }

    @Test func passwordsOffMakesRegisterAndLoginNoRoutes() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key], policy: AccountPolicy(passwordSignIn: false)) { client, fixture in
            let register = try await client.json(
                .post, "/v1/auth/register",
                body: #"{"email":"a@b.io","password":"correct horse","firstName":"A","lastName":"B"}"#)
            #expect(register.status == .notFound && register.problem?.code == "not-found")
            let login = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"a@b.io","password":"correct horse"}"#)
            #expect(login.status == .notFound)
            let signedIn = try await client.exchanged(
                try fixture.issuer.token(key, claims: profileClaims(email: "a@b.io")))
            let refreshed = try await client.json(
                .post, "/v1/auth/refresh", body: #"{"refreshToken":"\#(signedIn.refreshToken)"}"#)
            #expect(refreshed.status == .ok)
        }
    }

    @Test func withoutATrustedIssuerThereIsNoTokenRoute() async throws {
        try await APIHarness.make().run { client in
            let answer = try await client.exchange("a.b.c")
            #expect(answer.status == .notFound && answer.problem?.code == "not-found")
        }
    }
}
