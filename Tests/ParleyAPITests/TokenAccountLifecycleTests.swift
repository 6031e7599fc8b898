import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// An account an issuer's token made lives as any other: deactivated it cannot sign in by
/// token either, and deleted it frees the issuer's user for a new account.
struct TokenAccountLifecycleTests {
    @Test func aDeactivatedAccountIsRefusedByTokenToo() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let token = try fixture.issuer.token(key, claims: profileClaims(email: "d@example.com"))
            let first = try await client.exchanged(token)
            try await fixture.harness.database.client.query(
                "UPDATE cloud.user_account SET deactivated_at = now() WHERE id = \(first.user.id)", logger: .quiet)
            let refused = try await client.exchange(token)
            #expect(refused.status == .forbidden && refused.problem?.code == "account-deactivated")
        }
    }

    @Test func aDeletedAccountFreesTheIssuersUserForANewOne() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let admin = try await AdminRoutesTests().signUpAdmin(client, fixture.harness)
            let token = try fixture.issuer.token(key, claims: profileClaims(email: "gone@example.com"))
            let first = try await client.exchanged(token)
            let deleted = try await client.json(.delete, "/v1/admin/users/\(first.user.id)", token: admin)
            #expect(deleted.status == .accepted)
            #expect(try await fixture.counts().identities == 0)
            let again = try await client.exchanged(token)
            #expect(again.user.id != first.user.id && again.user.email == "gone@example.com")
        }
    }

    @Test func anAccountWithoutAPasswordDeletesItselfWithItsIssuersToken() async throws {
        let key = TestIssuer.Key.p256("e1")
        try await IssuerFixture.run([key]) { client, fixture in
            let token = try fixture.issuer.token(key, subject: "me", claims: profileClaims(email: "me@example.com"))
            let me = try await client.exchanged(token)
            let other = try fixture.issuer.token(key, subject: "other", claims: profileClaims(email: "o@example.com"))
            _ = try await client.exchanged(other)
            for (body, status) in [
                (#"{"subjectToken":"\#(other)"}"#, HTTPResponse.Status.unauthorized),
                (#"{"subjectToken":"not.a.token"}"#, .unauthorized),
                (#"{"currentPassword":"anything at all"}"#, .unauthorized),
                (#"{"currentPassword":"x","subjectToken":"\#(token)"}"#, .badRequest),
                ("{}", .badRequest),
            ] {
                let refused = try await client.json(.delete, "/v1/me", token: me.accessToken, body: body)
                #expect(refused.status == status, "\(body.prefix(40)): \(refused.text)")
            }
            let fresh = try fixture.issuer.token(key, subject: "me", claims: profileClaims(email: "me@example.com"))
            let deleted = try await client.json(
                .delete, "/v1/me", token: me.accessToken, body: #"{"subjectToken":"\#(fresh)"}"#)
            #expect(deleted.status == .accepted, "\(deleted.text)")
            #expect(try await client.json(.get, "/v1/me", token: me.accessToken).status == .unauthorized)
        }
    }
}
