import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import Testing

@testable import ParleyAPI

struct AdminRoutesTests {
    /// Signs up a user and makes them a system administrator (as `parley user create --admin` would).
    func signUpAdmin(_ client: any TestClientProtocol, _ harness: APIHarness) async throws -> String {
        try await promote(try await client.signUp(), client, harness)
    }

    /// Makes the user a system administrator; a token of a new sign-in, which carries it.
    func promote(_ login: LoginResponse, _ client: any TestClientProtocol, _ harness: APIHarness)
        async throws -> String
    {
        try await harness.database.client.query(
            "UPDATE cloud.user_account SET is_admin = true WHERE id = \(userID(login))", logger: .quiet)
        // Sign in again: the identity (and its admin flag) is read at authentication.
        let again = try await client.decoded(
            LoginResponse.self, .post, "/v1/auth/login",
            body: #"{"email":"\#(login.user.email ?? "")","password":"correct horse"}"#)
        return token(again)
    }

    @Test func everyAdministrationRouteIsForbiddenToOthers() async throws {
        try await APIHarness.make().run { client in
            let user = token(try await client.signUp())
            let routes: [(HTTPRequest.Method, String, String?)] = [
                (
                    .post, "/v1/admin/users",
                    #"{"email":"x@y.io","password":"correct horse","firstName":"X","lastName":"Y"}"#
                ),
                (.post, "/v1/admin/groups", #"{"name":"g"}"#),
                (.put, "/v1/admin/groups/1/members/1", nil),
                (.delete, "/v1/admin/groups/1/members/1", nil),
                (.get, "/v1/admin/apps", nil),
                (.post, "/v1/admin/apps/crm/roles", #"{"code":"foreman","name":"Foreman"}"#),
                (.put, "/v1/admin/users/1/roles/1", nil),
                (.delete, "/v1/admin/users/1/roles/1", nil),
                (.delete, "/v1/admin/users/1", nil),
            ]
            for (method, path, body) in routes {
                let answer = try await client.json(method, path, token: user, body: body)
                #expect(answer.status == .forbidden, "\(method) \(path)")
                #expect(answer.problem?.code == "forbidden")
                #expect(try await client.json(method, path, body: body).status == .unauthorized)
            }
        }
    }

    @Test func administratorsManageUsersGroupsApplicationsAndRoles() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await signUpAdmin(client, harness)

            let created = try await client.json(
                .post, "/v1/admin/users", token: admin,
                body: #"{"email":"staff@example.com","password":"correct horse","firstName":"S","lastName":"T"}"#)
            #expect(created.status == .created)
            let staff = (created.json["id"] as? NSNumber)?.int64Value ?? 0
            let duplicate = try await client.json(
                .post, "/v1/admin/users", token: admin,
                body: #"{"email":"STAFF@example.com","password":"correct horse","firstName":"S","lastName":"T"}"#)
            #expect(duplicate.problem?.code == "email-taken")

            let group = try await client.json(.post, "/v1/admin/groups", token: admin, body: #"{"name":"Support"}"#)
            #expect(group.status == .created)
            let groupID = (group.json["id"] as? NSNumber)?.int64Value ?? 0
            #expect(
                try await client.json(.post, "/v1/admin/groups", token: admin, body: #"{"name":"support"}"#).status
                    == .conflict)
            #expect(
                try await client.json(.put, "/v1/admin/groups/\(groupID)/members/\(staff)", token: admin).status
                    == .noContent)
            #expect(
                try await client.json(.put, "/v1/admin/groups/\(groupID)/members/\(staff)", token: admin).status
                    == .noContent)
            #expect(
                try await client.json(.put, "/v1/admin/groups/\(groupID)/members/999999", token: admin).status
                    == .notFound)
            #expect(
                try await client.json(.delete, "/v1/admin/groups/\(groupID)/members/\(staff)", token: admin).status
                    == .noContent)
            #expect(
                try await client.json(.delete, "/v1/admin/groups/\(groupID)/members/\(staff)", token: admin).status
                    == .notFound)

            let apps = try await client.decoded(ApplicationsResponse.self, .get, "/v1/admin/apps", token: admin)
            let messenger = apps.apps.first { $0.code == "messenger" }
            #expect(messenger?.roles.map(\.code) == ["reader", "writer", "admin"])

            let role = try await client.json(
                .post, "/v1/admin/apps/assembly/roles", token: admin,
                body: #"{"code":"foreman","name":"Foreman","rank":1}"#)
            #expect(role.status == .created)
            let roleID = (role.json["id"] as? NSNumber)?.int64Value ?? 0
            #expect(
                try await client.json(
                    .post, "/v1/admin/apps/assembly/roles", token: admin, body: #"{"code":"foreman","name":"Again"}"#
                ).status == .conflict)
            let badCode = try await client.json(
                .post, "/v1/admin/apps/assembly/roles", token: admin, body: #"{"code":"Fore Man","name":"x"}"#)
            #expect(badCode.problem?.field == "code")

            #expect(
                try await client.json(.put, "/v1/admin/users/\(staff)/roles/\(roleID)", token: admin).status
                    == .noContent)
            #expect(
                try await client.json(.put, "/v1/admin/users/\(staff)/roles/999999", token: admin).status == .notFound)
            #expect(
                try await client.json(.delete, "/v1/admin/users/\(staff)/roles/\(roleID)", token: admin).status
                    == .noContent)
            #expect(
                try await client.json(.delete, "/v1/admin/users/\(staff)/roles/\(roleID)", token: admin).status
                    == .notFound)
        }
    }
}
