import Foundation
import HummingbirdTesting
import ParleyKit
import Synchronization
import Testing

/// ParleyKit's REST client, generated from `openapi.yaml`, against the real routes on a
/// loopback port: what the document says is what the server answers.
struct GeneratedClientTests {
    @Test func signUpSignInSendAndReadHistoryThroughTheGeneratedClient() async throws {
        let harness = try await APIHarness.make()
        try await harness.run(mode: .live) { test in
            let port = try #require(test.port)
            let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let anonymous = ParleyREST.client(baseURL: baseURL)
            let tag = UUID().uuidString.prefix(8).lowercased()
            func register(_ name: String) async throws -> Int64 {
                let answer = try await anonymous.postV1AuthRegister(
                    body: .json(
                        .init(
                            email: "\(name)-\(tag)@example.test", password: "correct horse", firstName: name,
                            lastName: "Kit")))
                return Int64(try answer.created.body.json.id)
            }
            _ = try await register("ada")
            let bob = try await register("bob")

            let login = try await anonymous.postV1AuthLogin(
                body: .json(.init(email: "ada-\(tag)@example.test", password: "correct horse"))
            ).ok.body.json
            #expect(login.mqtt.username == String(login.user.id))
            let ada = ParleyREST.client(baseURL: baseURL, accessToken: { login.accessToken })

            let room = try await ada.putV1RoomsDirectUserId(path: .init(userId: Int(bob)))
            let roomID = try (try? room.ok.body.json.id) ?? room.created.body.json.id
            let sent = try await ada.postV1RoomsIdMessages(
                path: .init(id: roomID), body: .json(.init(content: "hello from ParleyKit", uid: "kit-\(tag)"))
            ).created.body.json
            #expect(sent.content == "hello from ParleyKit")
            let history = try await ada.getV1RoomsIdMessages(path: .init(id: roomID)).ok.body.json
            #expect(history.messages.map(\.id).contains(sent.id))

            let refused = try await anonymous.postV1AuthLogin(
                body: .json(.init(email: "ada-\(tag)@example.test", password: "wrong horse")))
            #expect(try refused.unauthorized.body.applicationProblemJson.code == "invalid-credentials")
        }
    }

    /// Refresh tokens are single-use (a second use revokes the session): twenty requests that
    /// find the access token due share one refresh, and the session stays signed in; a token the
    /// server refuses is renewed and the request sent again.
    @Test func callersFindingTheTokenDueShareOneRefreshAndA401IsRenewedOnce() async throws {
        let harness = try await APIHarness.make()
        try await harness.run(mode: .live) { test in
            let port = try #require(test.port)
            let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let anonymous = ParleyREST.client(baseURL: baseURL)
            let email = "kit-\(UUID().uuidString.prefix(8).lowercased())@example.test"
            _ = try await anonymous.postV1AuthRegister(
                body: .json(.init(email: email, password: "correct horse", firstName: "Kit", lastName: "Tokens")))
            let login = try await anonymous.postV1AuthLogin(body: .json(.init(email: email, password: "correct horse")))
                .ok.body.json

            let due = ParleyTokens(
                .init(accessToken: login.accessToken, refreshToken: login.refreshToken, expiresAt: .distantPast),
                client: anonymous)
            let renewals = Renewals()
            await due.setOnRenewal { renewals.add($0) }
            let me = ParleyREST.client(baseURL: baseURL, tokens: due)
            let names = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await me.getV1Me().ok.body.json.firstName } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(names == Array(repeating: "Kit", count: 20))
            #expect(renewals.count == 1, "one refresh for twenty callers")
            #expect(try await me.getV1Me().ok.body.json.firstName == "Kit", "the session is still signed in")

            let refused = ParleyTokens(
                .init(
                    accessToken: "v1.not-a-token.signature", refreshToken: await due.current.refreshToken,
                    expiresAt: .distantFuture),
                client: anonymous)
            let again = ParleyREST.client(baseURL: baseURL, tokens: refused)
            #expect(try await again.getV1Me().ok.body.json.firstName == "Kit")
            #expect(await refused.current.accessToken != "v1.not-a-token.signature")
        }
    }
}

/// The renewals a test's tokens went through.
private final class Renewals: Sendable {
    private let list = Mutex<[ParleyTokens.Tokens]>([])
    func add(_ tokens: ParleyTokens.Tokens) { list.withLock { $0.append(tokens) } }
    var count: Int { list.withLock { $0.count } }
}
