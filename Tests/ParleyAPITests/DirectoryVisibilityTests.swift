import Foundation
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// `PARLEY_DIRECTORY`: whom `GET /v1/users` finds.
struct DirectoryVisibilityTests {
    func ids(_ client: any TestClientProtocol, _ q: String, as user: LoginResponse) async throws -> Set<Int64> {
        let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? q
        let answer = try await client.json(.get, "/v1/users?q=\(encoded)&limit=100", token: token(user))
        #expect(answer.status == .ok, "\(answer.text)")
        return Set(try decode(ListPage<UserResponse>.self, from: answer.text).items.map(\.id))
    }

    @Test func roomMatesFindOnlyThemselvesAndWhoSharesARoom() async throws {
        try await APIHarness.make(policy: AccountPolicy(directory: .roomMates)).run { client in
            let strangerEmail = "stranger-\(UUID().uuidString.prefix(8))@example.com"
            let stranger = try await client.signUp(email: strangerEmail)
            let mateEmail = "mate-\(UUID().uuidString.prefix(8))@example.com"
            let mate = try await client.signUp(email: mateEmail)
            let me = try await client.signUp()
            _ = try await client.json(.put, "/v1/rooms/direct/\(userID(mate))", token: token(me))

            #expect(try await ids(client, strangerEmail, as: me).isEmpty)
            #expect(try await ids(client, mateEmail, as: me) == [userID(mate)])
            let named = try await ids(client, "Test", as: me)
            #expect(named == [userID(mate), userID(me)])
            #expect(!named.contains(userID(stranger)))
        }
    }

    @Test func everyoneIsTheDefaultAndFindsStrangers() async throws {
        try await APIHarness.make().run { client in
            let strangerEmail = "stranger-\(UUID().uuidString.prefix(8))@example.com"
            let stranger = try await client.signUp(email: strangerEmail)
            let me = try await client.signUp()
            #expect(try await ids(client, strangerEmail, as: me) == [userID(stranger)])
        }
    }
}
