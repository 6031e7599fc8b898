import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import Testing

@testable import ParleyAPI

/// Server keys: issued once with their secret, stored hashed, scoped, rotated with a grace,
/// revoked, limited, and every use recorded.
@Suite struct ServerAPITests {
    private func issue(
        _ client: any TestClientProtocol, admin: String, scopes: [APIKeyScope], name: String = "backend"
    ) async throws -> IssuedAPIKey {
        try await client.decoded(
            IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
            body: #"{"name":"\#(name)","scopes":\#(try jsonText(scopes.map(\.rawValue)))}"#)
    }

    @Test func aKeyIsAnsweredOnceAndStoredOnlyAsItsHash() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let created = try await client.json(
                .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["messages:read","admin"],"expiresAt":"2099-01-01T00:00:00.000Z"}"#)
            #expect(created.status == .created)
            let issued = try decode(IssuedAPIKey.self, from: created.text)
            #expect(issued.secret.hasPrefix("pk_") && issued.secret.count > 40)
            #expect(issued.key.scopes == [.admin, .messagesRead] && issued.key.issuer == "parley")
            #expect(
                Set(created.json.keys) == [
                    "id", "name", "scopes", "issuer", "createdById", "botId", "createdAt", "expiresAt", "lastUsedAt",
                    "secret",
                ])
            #expect(created.json["createdById"] as? Int != nil)
            let listed = try await client.json(.get, "/v1/admin/api-keys", token: admin)
            #expect(listed.status == .ok && !listed.text.contains(issued.secret) && !listed.text.contains("secret"))
            #expect(try decode(ListPage<APIKey>.self, from: listed.text).items.map(\.id) == [issued.key.id])
            let stored = try await harness.database.client.query(
                "SELECT count(*) FROM cloud.api_key WHERE position(\(issued.secret) IN encode(secret_hash, 'escape')) > 0",
                logger: .quiet
            ).single(Int64.self)
            #expect(stored == 0)
            // A past expiry, no scope, an unknown scope: 400.
            for body in [
                #"{"name":"x","scopes":["admin"],"expiresAt":"2000-01-01T00:00:00.000Z"}"#,
                #"{"name":"x","scopes":[]}"#, #"{"name":"x","scopes":["everything"]}"#,
            ] {
                let refused = try await client.json(.post, "/v1/admin/api-keys", token: admin, body: body)
                #expect(refused.status == .badRequest, "\(body)")
            }
            // Only administrators issue keys.
            let user = try await client.signUp()
            let forbidden = try await client.json(
                .post, "/v1/admin/api-keys", token: token(user), body: #"{"name":"x","scopes":["admin"]}"#)
            #expect(forbidden.status == .forbidden)
        }
    }

    @Test(arguments: APIKeyScope.allCases)
    func eachServerRouteOpensOnlyToItsScope(_ scope: APIKeyScope) async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, _) = try await client.roomOfThree()
            let key = try await issue(client, admin: admin, scopes: [scope])
            // Two users of the app, made by a key that may.
            let maker = try await issue(client, admin: admin, scopes: [.usersWrite], name: "maker")
            for name in ["ann", "bob"] {
                let email = "\(name)-\(UUID().uuidString.prefix(8))@example.com"
                let made = try await client.json(
                    .put, "/v1/server/users/\(name)", token: maker.secret, body: #"{"email":"\#(email)"}"#)
                #expect(made.status == .created)
            }
            let email = "server-\(UUID().uuidString.prefix(8))@example.com"
            let members = #"[{"externalId":"ann","role":"admin"},{"externalId":"bob","role":"writer"}]"#
            let routes: [(method: HTTPRequest.Method, path: String, body: String?, needs: APIKeyScope)] = [
                (.get, "/v1/server/rooms/\(roomID)/messages", nil, .messagesRead),
                (.put, "/v1/server/users/u-\(scope.rawValue)", #"{"email":"\#(email)"}"#, .usersWrite),
                (
                    .post, "/v1/server/rooms/\(roomID)/messages",
                    #"{"sentBy":"system","content":"notice","uid":"\#(scope.rawValue)"}"#, .messagesWrite
                ),
                (.post, "/v1/server/rooms", #"{"name":"R","members":\#(members)}"#, .roomsWrite),
                (.put, "/v1/server/rooms/\(roomID)/members/ann", #"{"role":"reader"}"#, .roomsWrite),
                (.delete, "/v1/server/rooms/\(roomID)/members/ann", nil, .roomsWrite),
                (.get, "/v1/admin/api-keys", nil, .admin),
                (.get, "/v1/admin/audit", nil, .admin),
            ]
            for route in routes {
                let answer = try await client.json(route.method, route.path, token: key.secret, body: route.body)
                let opens = scope == route.needs || scope == .admin
                #expect(
                    opens ? (200..<300).contains(answer.status.code) : answer.status == .forbidden,
                    "\(scope) \(route.path): \(answer.text)")
                if !opens { #expect(answer.problem?.code == "forbidden") }
            }
        }
    }

    @Test func theServerReadsHistoryAsItIsAndNoRoomIs404() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, users) = try await client.roomOfThree()
            for index in 0..<3 { try await client.send("m\(index)", uid: "m\(index)", to: roomID, as: users[1]) }
            let key = try await issue(client, admin: admin, scopes: [.messagesRead])
            let page = try await client.decoded(
                MessagesResponse.self, .get, "/v1/server/rooms/\(roomID)/messages?limit=2", token: key.secret)
            #expect(page.messages.map(\.content) == ["m1", "m2"] && page.hasMore)
            let rest = try await client.decoded(
                MessagesResponse.self, .get,
                "/v1/server/rooms/\(roomID)/messages?limit=2&cursor=\(try #require(page.nextCursor))",
                token: key.secret)
            #expect(rest.messages.map(\.content) == ["first", "m0"] && !rest.hasMore)
            let missing = try await client.json(.get, "/v1/server/rooms/999999999/messages", token: key.secret)
            #expect(missing.status == .notFound)
        }
    }

    @Test func aKeyOpensNoUserRouteAndAUserTokenNoServerRoute() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, users) = try await client.roomOfThree()
            let key = try await issue(client, admin: admin, scopes: [.admin])
            #expect(try await client.json(.get, "/v1/rooms", token: key.secret).status == .unauthorized)
            for caller in [token(users[0]), admin, "pk_unknown", ""] {
                let answer = try await client.json(.get, "/v1/server/rooms/\(roomID)/messages", token: caller)
                #expect(answer.status == .unauthorized, "\(caller.prefix(6))")
            }
        }
    }

    @Test func aRotatedKeysOldSecretLastsItsGraceAndARevokedKeyNothing() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, _) = try await client.roomOfThree()
            let route = "/v1/server/rooms/\(roomID)/messages"
            let key = try await issue(client, admin: admin, scopes: [.messagesRead])
            let graced = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys/\(key.key.id)/rotate", token: admin,
                body: #"{"graceSeconds":3600}"#)
            #expect(graced.key.id == key.key.id && graced.secret != key.secret)
            #expect(try await client.json(.get, route, token: key.secret).status == .ok)
            #expect(try await client.json(.get, route, token: graced.secret).status == .ok)
            let rotated = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys/\(key.key.id)/rotate", token: admin, body: "{}")
            #expect(try await client.json(.get, route, token: graced.secret).status == .unauthorized)
            #expect(try await client.json(.get, route, token: key.secret).status == .unauthorized)
            #expect(try await client.json(.get, route, token: rotated.secret).status == .ok)
            #expect(
                try await client.json(.delete, "/v1/admin/api-keys/\(key.key.id)", token: admin).status == .noContent)
            #expect(try await client.json(.get, route, token: rotated.secret).status == .unauthorized)
            #expect(
                try await client.json(.delete, "/v1/admin/api-keys/\(key.key.id)", token: admin).status == .notFound)
            let list = try await client.decoded(ListPage<APIKey>.self, .get, "/v1/admin/api-keys", token: admin)
            #expect(list.items.isEmpty)
            let refused = try await client.json(
                .post, "/v1/admin/api-keys/\(key.key.id)/rotate", token: admin, body: #"{"graceSeconds":-1}"#)
            #expect(refused.status == .badRequest || refused.status == .notFound)
        }
    }

    @Test func everyUseIsAuditedNewestFirst() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, _) = try await client.roomOfThree()
            let key = try await issue(client, admin: admin, scopes: [.messagesRead])
            _ = try await client.json(.get, "/v1/server/rooms/\(roomID)/messages", token: key.secret)
            // A refused call is recorded too.
            let refused = try await client.json(
                .put, "/v1/server/users/x", token: key.secret, body: #"{"email":"x@example.com"}"#)
            #expect(refused.status == .forbidden)
            var entries = try await client.decoded(ListPage<AuditEntry>.self, .get, "/v1/admin/audit", token: admin)
                .items
            #expect(entries.first?.action == "PUT /v1/server/users/{externalId}")
            entries.removeFirst()
            #expect(entries.count == 2)
            #expect(entries[0].actor == AuditEntry.Actor(type: "key", id: key.key.id))
            #expect(entries[0].action == "GET /v1/server/rooms/{id}/messages")
            #expect(entries[0].target == "/v1/server/rooms/\(roomID)/messages")
            #expect(entries[1].actor.type == "user" && entries[1].action == "POST /v1/admin/api-keys")
            #expect(entries[0].id > entries[1].id)
            let page = try await client.decoded(
                ListPage<AuditEntry>.self, .get, "/v1/admin/audit?limit=1", token: admin)
            #expect(page.items.map(\.action) == ["PUT /v1/server/users/{externalId}"])
            let next = try await client.decoded(
                ListPage<AuditEntry>.self, .get, "/v1/admin/audit?limit=1&cursor=\(try #require(page.nextCursor))",
                token: admin)
            #expect(next.items.map(\.id) == [entries[0].id])
        }
    }

    @Test func aKeyOverItsBudgetIs429WithRetryAfter() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let (roomID, _) = try await client.roomOfThree()
            let key = try await issue(client, admin: admin, scopes: [.messagesRead])
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?, String?).self) { group in
                for _ in 0..<120 {
                    group.addTask {
                        let answer = try await client.json(
                            .get, "/v1/server/rooms/\(roomID)/messages?limit=1", token: key.secret)
                        return (answer.status, answer.problem?.code, answer.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let limited = answers.filter { $0.0 == .tooManyRequests }
            #expect(!limited.isEmpty && answers.count - limited.count >= 50)
            #expect(limited.allSatisfy { $0.1 == "rate-limited" && $0.2 != nil })
        }
    }
}
