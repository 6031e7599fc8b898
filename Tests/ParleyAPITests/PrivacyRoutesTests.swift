import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `GET`/`PATCH /v1/me/privacy`: each user's own, defaults and partial changes, refusals.
struct PrivacyRoutesTests {
    @Test func privacyStartsAtTheDefaultsAndChangesOnlyWhatIsNamed() async throws {
        try await APIHarness.make().run { client in
            let (user, other) = (try await client.signUp(), try await client.signUp())
            let initial = try await client.decoded(Privacy.self, .get, "/v1/me/privacy", token: token(user))
            #expect(initial == Privacy(readReceipts: .everyone, typing: .on, presence: .roomMates))
            let answer = try await client.json(.get, "/v1/me/privacy", token: token(user))
            #expect(answer.text.contains(#""presence":"room-mates""#))

            let changed = try await client.decoded(
                Privacy.self, .patch, "/v1/me/privacy", token: token(user), body: #"{"readReceipts":"nobody"}"#)
            #expect(changed == Privacy(readReceipts: .nobody, typing: .on, presence: .roomMates))
            let more = try await client.decoded(
                Privacy.self, .patch, "/v1/me/privacy", token: token(user),
                body: #"{"typing":"off","presence":"nobody"}"#)
            #expect(more == Privacy(readReceipts: .nobody, typing: .off, presence: .nobody))
            #expect(try await client.decoded(Privacy.self, .get, "/v1/me/privacy", token: token(user)) == more)
            // Another user's is theirs alone.
            #expect(try await client.decoded(Privacy.self, .get, "/v1/me/privacy", token: token(other)) == initial)
        }
    }

    @Test func aBadChangeIsRefusedWithTheFieldAndChangesNothing() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            for (body, field) in [
                (#"{"presence":"friends"}"#, "presence"), (#"{"typing":true}"#, "typing"),
                (#"{"readReceipts":null}"#, nil), ("{}", nil),
            ] {
                let answer = try await client.json(.patch, "/v1/me/privacy", token: token(user), body: body)
                #expect(answer.status == .badRequest, "\(body): \(answer.text)")
                #expect(answer.headers[.contentType] == "application/problem+json")
                if let field { #expect(answer.json["field"] as? String == field) }
            }
            #expect(try await client.decoded(Privacy.self, .get, "/v1/me/privacy", token: token(user)) == .standard)
            #expect(try await client.json(.get, "/v1/me/privacy").status == .unauthorized)
            #expect(try await client.json(.patch, "/v1/me/privacy", body: "{}").status == .unauthorized)
        }
    }
}
