import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import Testing

@testable import ParleyAPI

/// A key with the `admin` scope opens `/v1/admin/*` as the administrator who issued it, while
/// they still are one; every call it makes there is audited as the key's.
@Suite struct AdminKeyTests {
    @Test func anAdminKeyActsAsItsIssuerWhileTheyAreAnAdministrator() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let login = try await client.signUp()
            let admin = try await AdminRoutesTests().promote(login, client, harness)
            let key = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"ops","scopes":["admin"]}"#)
            #expect(key.key.createdById == login.user.id)
            let users = try await client.json(.get, "/v1/admin/users", token: key.secret)
            #expect(users.status == .ok, "\(users.text)")
            // A key the key issues is the administrator's, and its use is the key's in the log.
            let issued = try await client.json(
                .post, "/v1/admin/api-keys", token: key.secret, body: #"{"name":"next","scopes":["messages:read"]}"#)
            #expect(issued.status == .created && issued.json["createdById"] as? Int == Int(login.user.id))
            let entries = try await client.decoded(ListPage<AuditEntry>.self, .get, "/v1/admin/audit", token: admin)
                .items
            #expect(
                entries.prefix(2).map(\.action) == ["POST /v1/admin/api-keys", "GET /v1/admin/users"], "\(entries)")
            #expect(entries.prefix(2).allSatisfy { $0.actor == AuditEntry.Actor(type: "key", id: key.key.id) })
            #expect(entries.filter { $0.actor.type == "user" }.count == 1)
            // Another scope does not open the admin routes; a key never opens a user route.
            let reader = try decode(IssuedAPIKey.self, from: issued.text)
            let refused = try await client.json(.get, "/v1/admin/users", token: reader.secret)
            #expect(refused.status == .forbidden && refused.problem?.code == "forbidden")
            #expect(try await client.json(.get, "/v1/me", token: key.secret).status == .unauthorized)
            // Once the issuer is no administrator, the key opens nothing there.
            try await harness.database.client.query(
                "UPDATE cloud.user_account SET is_admin = false WHERE id = \(login.user.id)", logger: .quiet)
            let demoted = try await client.json(.get, "/v1/admin/users", token: key.secret)
            #expect(demoted.status == .forbidden, "\(demoted.text)")
            #expect(try await client.json(.get, "/v1/admin/users", token: "pk_unknown").status == .unauthorized)
        }
    }
}
