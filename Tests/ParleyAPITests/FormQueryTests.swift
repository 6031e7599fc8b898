import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Query strings as form-encoding clients send them (Python's httpx, `URLSearchParams`): `+`
/// is a space and `%2B` a plus, on every list route, the same as `%20`.
struct FormQueryTests {
    @Test func thePlusOfAQueryIsASpaceAndThePathIsLeftAlone() {
        func decoded(_ uri: String) -> Request {
            let request = Request(
                head: HTTPRequest(method: .get, scheme: "https", authority: "x", path: uri),
                body: .init(buffer: .init()))
            return FormQueryMiddleware<BasicRequestContext>.formDecoded(request)
        }
        func path(_ uri: String) -> String? { decoded(uri).head.path }
        #expect(path("/v1/search/messages?q=prilis+kun") == "/v1/search/messages?q=prilis%20kun")
        #expect(path("/app/a+b.js?x=%2B") == "/app/a+b.js?x=%2B")
        #expect(path("/a+b") == "/a+b")
        #expect(decoded("/s?q=a+b%2Bc").uri.queryParameters["q"] == "a b+c")
    }

    @Test func everyListRouteReadsItsParametersBothWays() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            _ = try await client.json(
                .patch, "/v1/rooms/\(room)", token: token(admin), body: #"{"name":"Blue Team Lounge"}"#)
            _ = try await client.send("Tady je příliš kůň dlouhý", uid: "k-1", to: room, as: writer)
            _ = try await client.send("a+b is not a b", uid: "k-2", to: room, as: writer)

            /// The same route with its query's spaces written as `+` and as `%20`: equal answers.
            func both(_ route: String, _ query: String, as user: LoginResponse) async throws -> String {
                let plus = try await client.json(
                    .get, "\(route)?\(query.replacingOccurrences(of: " ", with: "+"))", token: token(user))
                let escaped = try await client.json(
                    .get, "\(route)?\(query.replacingOccurrences(of: " ", with: "%20"))", token: token(user))
                #expect(plus.status == .ok, "\(route) \(query): \(plus.text)")
                #expect(plus.text == escaped.text, "\(route) \(query)")
                return plus.text
            }
            func contents(_ text: String) throws -> [String] {
                try decode(ListPage<SearchResultBody>.self, from: text).items.map(\.message.content)
            }

            let search = try await both("/v1/search/messages", "q=prilis kun&limit=10", as: reader)
            #expect(try contents(search) == ["Tady je příliš kůň dlouhý"])
            let scoped = try await both("/v1/search/messages", "q=prilis kun&roomId=\(room)", as: reader)
            #expect(try contents(scoped) == ["Tady je příliš kůň dlouhý"])
            // %2B is a plus: one word "a+b", which the search reads as the words a and b.
            let literal = try await client.json(.get, "/v1/search/messages?q=a%2Bb", token: token(reader))
            #expect(literal.status == .ok)

            let rooms = try await both("/v1/search/rooms", "q=blue team", as: reader)
            #expect(try decode(RoomsResponse.self, from: rooms).rooms.map(\.id) == [Int64(room)])

            _ = try await both("/v1/users", "q=Test User&limit=5", as: reader)
            // An e-mail's plus comes as %2B; a bare + is a space, as a form encoder means it.
            let tagged = "plus+tag-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let plus = try await client.signUp(email: tagged)
            let escaped = tagged.replacingOccurrences(of: "+", with: "%2B")
            let found = try await client.json(.get, "/v1/users?q=\(escaped)", token: token(reader))
            #expect(try decode(ListPage<UserResponse>.self, from: found.text).items.map(\.id) == [userID(plus)])
            let spaced = try await client.json(.get, "/v1/users?q=\(tagged)", token: token(reader))
            #expect(try decode(ListPage<UserResponse>.self, from: spaced.text).items.isEmpty)

            // A time's offset: `+` unescaped (read as a space) and `%2B` mean the same.
            let since = "2000-01-01T01:00:00%2B01:00"
            let roomList = try await both("/v1/rooms", "since=\(since)&limit=5", as: reader)
            #expect(try decode(RoomsResponse.self, from: roomList).rooms.isEmpty == false)
            let rawPlus = try await client.json(
                .get, "/v1/rooms?since=2000-01-01T01:00:00+01:00&limit=5", token: token(reader))
            let escapedPlus = try await client.json(
                .get, "/v1/rooms?since=\(since)&limit=5", token: token(reader))
            #expect(rawPlus.status == .ok && rawPlus.text == escapedPlus.text)
            let history = try await both("/v1/rooms/\(room)/messages", "since=\(since)&limit=50", as: reader)
            #expect(try decode(MessagesResponse.self, from: history).messages.count == 3)
            // Changes come as a page of messages too.
            let changes = try await both("/v1/rooms/\(room)/messages", "changedSince=\(since)&limit=50", as: reader)
            _ = try decode(MessagesResponse.self, from: changes)
            _ = try await both("/v1/rooms/\(room)/members", "limit=5", as: reader)
            _ = try await both("/v1/rooms/\(room)/files", "limit=5", as: reader)
            _ = try await both("/v1/me/blocks", "limit=5", as: reader)

            // The administrators' lists too.
            let adminToken = try await AdminRoutesTests().signUpAdmin(client, harness)
            for (route, query) in [("/v1/admin/users", "q=Test User&limit=5"), ("/v1/admin/reports", "status=open")] {
                let plus = try await client.json(
                    .get, "\(route)?\(query.replacingOccurrences(of: " ", with: "+"))", token: adminToken)
                let escaped = try await client.json(
                    .get, "\(route)?\(query.replacingOccurrences(of: " ", with: "%20"))", token: adminToken)
                #expect(plus.status == .ok && plus.text == escaped.text, "\(route)")
            }
        }
    }
}
