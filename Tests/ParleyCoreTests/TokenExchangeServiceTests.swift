import Crypto
import Foundation
import Testing

@testable import ParleyCore

/// `AccountService.exchange` over fakes: a refused token provisions nothing and signs no one
/// in; a good one ends as a login ends.
struct TokenExchangeServiceTests {
    let base = AccountServiceTests()

    func service(issuers: Bool = true) throws -> AccountService {
        let keys = IssuerKeys(
            fetcher: IssuerKeysTests.Documents(IssuerKeysTests.document([("e1", IssuerTokenTests.p256)])))
        let exchange = TokenExchange(
            verifier: IssuerTokenVerifier(
                issuers: [IssuerTokenTests.issuer], keys: keys, now: { IssuerTokenTests.now }),
            provisioning: IdentityProvisioning(
                identities: InMemoryIdentities(users: base.users), users: base.users, linkVerifiedEmail: false))
        let announced = base.announced
        return AccountService(
            users: base.users, sessions: base.sessions, hasher: base.hasher, limiter: base.limiter,
            revocations: announced, broker: announced,
            mqttKey: try MQTTTokenKey(bytes: Array(repeating: 1, count: 32)), policy: AccountPolicy(),
            revokedLocally: { announced.local($0) }, tokenExchange: issuers ? exchange : nil)
    }

    @Test func aGoodTokenSignsInAndProvisionsOnce() async throws {
        let service = try service()
        let first = try await service.exchange(
            token: try IssuerTokenTests.token(), device: DeviceRegistration(), clientAddress: "10.0.0.1")
        let second = try await service.exchange(
            token: try IssuerTokenTests.token(), device: DeviceRegistration(), clientAddress: "10.0.0.1")
        #expect(first.user.id == second.user.id && first.user.email == "ada@example.com")
        #expect(first.tokens.access.value != second.tokens.access.value)
        #expect(await base.users.accounts.count == 1)
        // No password opens it, not even the hash's own text; answered as an unknown e-mail.
        let verifications = base.hasher.verifications
        let error = await #expect(throws: ParleyError.self) {
            try await service.login(
                email: "ada@example.com", password: NewUser.noPassword, device: DeviceRegistration(),
                clientAddress: "10.0.0.1")
        }
        #expect(error?.code == .invalidCredentials)
        #expect(base.hasher.verifications == verifications + 1)
    }

    @Test func refusedTokensProvisionNothing() async throws {
        let service = try service()
        for token in [
            IssuerTokenTests.tampered(try IssuerTokenTests.token()), try IssuerTokenTests.token("HS256", kid: "e1"),
            try IssuerTokenTests.token(claims: IssuerTokenTests.claims(["email": "-"])),
            try IssuerTokenTests.token(claims: IssuerTokenTests.claims(["email": #""no address""#])),
        ] {
            await #expect(throws: TokenRefused.self) {
                try await service.exchange(token: token, device: DeviceRegistration(), clientAddress: nil)
            }
        }
        #expect(await base.users.accounts.isEmpty)
    }

    @Test func withoutIssuersThereIsNothingToExchange() async throws {
        let error = await #expect(throws: ParleyError.self) {
            try await service(issuers: false).exchange(
                token: try IssuerTokenTests.token(), device: DeviceRegistration(), clientAddress: nil)
        }
        #expect(error?.code == .notFound)
    }
}
