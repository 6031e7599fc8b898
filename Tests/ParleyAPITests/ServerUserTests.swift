import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `PUT /v1/server/users/{externalId}`: the app's backend makes and updates its users by its
/// own ids, which are subjects of the key's issuer; the user signs in later by token exchange.
struct ServerUserTests {
    @Test func theBackendsUserIsTheIssuersUserAndKeepsWhatIsNotSaid() async throws {
        let key = try TestIssuer.Key.rsa("r1")
        try await IssuerFixture.run([key]) { client, fixture in
            let admin = try await AdminRoutesTests().signUpAdmin(client, fixture.harness)
            let issued = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["users:write"]}"#)
            #expect(issued.key.issuer == fixture.issuer.issuer)
            let created = try await client.json(
                .put, "/v1/server/users/app-42", token: issued.secret,
                body: #"{"email":"grace@example.com","firstName":"Grace","lastName":"Hopper"}"#)
            #expect(created.status == .created, "\(created.text)")
            let made = try decode(ServerController.ServerUserResponse.self, from: created.text)
            #expect(made.externalId == "app-42")
            let userID = made.user.id
            let updated = try await client.json(
                .put, "/v1/server/users/app-42", token: issued.secret, body: #"{"firstName":"Amazing Grace"}"#)
            #expect(updated.status == .ok)
            let now = try decode(ServerController.ServerUserResponse.self, from: updated.text).user
            #expect(now.id == userID && now.firstName == "Amazing Grace")
            #expect(now.lastName == "Hopper" && now.email == "grace@example.com")
            // The same subject signs in by token exchange as that user.
            let token = try fixture.issuer.token(
                key, subject: "app-42", claims: profileClaims(email: "grace@example.com"))
            let signedIn = try decode(LoginResponse.self, from: try await client.exchange(token).text)
            #expect(signedIn.user.id == userID)
            // A new user needs an e-mail; a bad one names its field.
            let missing = try await client.json(
                .put, "/v1/server/users/app-43", token: issued.secret, body: #"{"firstName":"X"}"#)
            #expect(missing.status == .badRequest && missing.problem?.field == "email")
            // Another scope does not open it.
            let reader = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"reader","scopes":["messages:read"]}"#)
            let forbidden = try await client.json(
                .put, "/v1/server/users/app-44", token: reader.secret, body: #"{"email":"x@example.com"}"#)
            #expect(forbidden.status == .forbidden)
        }
    }
}
