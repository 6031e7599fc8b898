import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `parley serve` as deployed: issuers from `PARLEY_AUTH_ISSUERS_FILE`, an issuer under a
/// private authority trusted through `PARLEY_AUTH_CA_FILE` and reached on loopback through
/// `PARLEY_OUTBOUND_ALLOW`, passwords off, and the README's curl exchange.
struct TokenExchangeProcessTests {
    @Test func serveExchangesAnIssuersTokenAndStopsCleanly() async throws {
        let key = try TestIssuer.Key.rsa("k1")
        let issuer = try await TestIssuer.start([key])
        let issuersFile = TestScratch.path("issuers", suffix: ".json")
        try Data("[\(issuer.entry(algorithms: ["RS256"]))]".utf8).write(to: URL(fileURLWithPath: issuersFile))
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_AUTH_ISSUERS_FILE": issuersFile, "PARLEY_AUTH_CA_FILE": try issuer.authority.writeCertificate(),
                "PARLEY_AUTH_PASSWORD": "off", "PARLEY_OUTBOUND_ALLOW": "127.0.0.0/8, ::1/128",
            ]) { $1 })
        let stack = try await LiveStack.start(parley, worker: false)
        let statuses: [String: Int32]
        do {
            let token = try issuer.token(
                key, subject: "app-user-7", claims: ["email": #""ada@example.com""#, "given_name": #""Ada""#])
            let exchanged = try await stack.request(
                "POST", "/v1/auth/token",
                body: """
                    {"grantType": "urn:ietf:params:oauth:grant-type:token-exchange",
                     "subjectTokenType": "urn:ietf:params:oauth:token-type:jwt",
                     "subjectToken": "\(token)", "device": {"platform": "ios", "name": "iPhone"}}
                    """)
            #expect(exchanged.status == 200, "\(exchanged.text)")
            let login = try exchanged.decoded(LoginResponse.self)
            #expect(login.user.email == "ada@example.com" && login.user.firstName == "Ada")
            #expect(try await stack.request("GET", "/v1/me", token: login.accessToken).status == 200)
            let password = try await stack.request(
                "POST", "/v1/auth/login", body: #"{"email":"ada@example.com","password":"correct horse"}"#)
            #expect(password.status == 404)
            let forged = try await stack.request(
                "POST", "/v1/auth/token",
                body: #"{"grantType": "urn:ietf:params:oauth:grant-type:token-exchange","#
                    + #""subjectTokenType": "urn:ietf:params:oauth:token-type:jwt", "subjectToken": "a.b.c"}"#)
            #expect(forged.status == 401 && forged.text.contains("invalid-token"))
            // The reason is logged, the token never.
            #expect(!stack.log("serve.log").contains(token))
        } catch {
            await stack.stop()
            await issuer.stop()
            throw error
        }
        statuses = await stack.stop()
        await issuer.stop()
        #expect(statuses["serve"] == 0)
        #expect(issuer.reads == 1)
    }
}
