import Foundation
import HummingbirdTesting
import ParleyKit
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
}
