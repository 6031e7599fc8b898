import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyIdentity
import ParleyTestSupport
import Synchronization

@testable import ParleyAPI

/// One API instance trusting one test issuer over HTTPS (its authority trusted as
/// `PARLEY_AUTH_CA_FILE` trusts one), with a clock for the issuer keys the test moves.
struct IssuerFixture: Sendable {
    let issuer: TestIssuer
    let harness: APIHarness
    let clock: TestClock

    /// Runs `body` against an API that trusts `issuer` for `algorithms`; stops everything after.
    static func run(
        _ keys: [TestIssuer.Key], maxAge: Int? = 300, algorithms: [String] = ["RS256", "ES256", "EdDSA"],
        linkVerifiedEmail: Bool = false, policy: AccountPolicy = AccountPolicy(),
        entry: ((TestIssuer) -> String)? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, IssuerFixture) async throws -> Void
    ) async throws {
        let issuer = try await TestIssuer.start(keys, maxAge: maxAge)
        let fetcher = try HTTPSKeyFetcher(caFile: try issuer.authority.writeCertificate(), rule: TestIssuer.loopback)
        let clock = TestClock()
        var harness = try await APIHarness.make(policy: policy)
        let text = entry?(issuer) ?? issuer.entry(algorithms: algorithms)
        harness.issuers = [try JSONDecoder().decode(TrustedIssuer.self, from: Data(text.utf8))]
        harness.issuerKeys = IssuerKeys(fetcher: IssuerKeySources(https: fetcher), now: { clock.now })
        harness.linkVerifiedEmail = linkVerifiedEmail
        let fixture = IssuerFixture(issuer: issuer, harness: harness, clock: clock)
        let outcome = await harness.runCatching { client in try await body(client, fixture) }
        try? await fetcher.shutdown()
        await issuer.stop()
        try outcome.get()
    }

    /// Accounts and linked identities in the database: what a refusal must leave as it was.
    func counts() async throws -> (users: Int, identities: Int) {
        let rows = try await harness.database.client.query(
            """
            SELECT (SELECT count(*) FROM cloud.user_account)::int, (SELECT count(*) FROM cloud.user_identity)::int
            """, logger: .quiet)
        for try await (users, identities) in rows.decode((Int, Int).self) { return (users, identities) }
        return (-1, -1)
    }
}

extension APIHarness {
    /// ``run(broker:_:)``'s outcome, so that what the test started can be stopped either way.
    func runCatching(
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async -> Result<Void, any Error> {
        do {
            try await run(body)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

/// A clock the test moves: the issuer keys' age without waiting for it.
final class TestClock: Sendable {
    let start = ContinuousClock.now
    let offset = Mutex(Duration.zero)
    func advance(_ by: Duration) { offset.withLock { $0 += by } }
    var now: ContinuousClock.Instant { start.advanced(by: offset.withLock { $0 }) }
}

extension TestClientProtocol {
    /// `POST /v1/auth/token` with `token`, as a client of the contract sends it.
    func exchange(_ token: String, device: String? = nil) async throws -> JSONAnswer {
        let deviceJSON = device.map { #","device":\#($0)"# } ?? ""
        return try await json(
            .post, "/v1/auth/token",
            body: #"""
                {"grantType":"urn:ietf:params:oauth:grant-type:token-exchange",
                 "subjectTokenType":"urn:ietf:params:oauth:token-type:jwt","subjectToken":"\#(token)"\#(deviceJSON)}
                """#)
    }

    /// A successful exchange's answer, as the login answer's type.
    func exchanged(_ token: String, device: String? = nil) async throws -> LoginResponse {
        let answer = try await exchange(token, device: device)
        guard answer.status == .ok else { throw HarnessError("exchange answered \(answer.status): \(answer.text)") }
        return try decode(LoginResponse.self, from: answer.text)
    }
}

/// Claims of a user at the issuer, as raw JSON values.
func profileClaims(email: String, first: String? = nil, last: String? = nil, verified: Bool? = nil) -> [String: String]
{
    var claims = ["email": "\"\(email)\""]
    if let first { claims["given_name"] = "\"\(first)\"" }
    if let last { claims["family_name"] = "\"\(last)\"" }
    if let verified { claims["email_verified"] = "\(verified)" }
    return claims
}
