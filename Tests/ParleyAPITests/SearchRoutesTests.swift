import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// `GET /v1/search/messages` and `GET /v1/search/rooms` on real PostgreSQL: prefixes, case
/// and accents in several scripts, phrases, access, paging and hostile queries.
struct SearchRoutesTests {
    /// The contents of the messages `q` finds for `user`, newest first.
    func found(_ client: any TestClientProtocol, _ q: String, as user: LoginResponse, room: Int? = nil) async throws
        -> [String]
    {
        let answer = try await search(client, q, as: user, room: room)
        #expect(answer.status == .ok, "\(q): \(answer.text)")
        return try decode(ListPage<SearchResultBody>.self, from: answer.text).items.map(\.message.content)
    }

    func search(
        _ client: any TestClientProtocol, _ q: String, as user: LoginResponse, room: Int? = nil, extra: String = ""
    )
        async throws -> JSONAnswer
    {
        let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? q
        let scope = room.map { "&roomId=\($0)" } ?? ""
        return try await client.json(.get, "/v1/search/messages?q=\(encoded)\(scope)\(extra)", token: token(user))
    }

    @Test func wordsMatchAsPrefixesWithoutCaseOrAccentsInAnyScript() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            let writer = users[1]
            let texts = [
                "Tady je zpráva, je to příliš dlouhé", "Grüße aus München, Straße", "Привет, как дела сегодня",
                "Καλημέρα κόσμε", "今日は良い天気です", "the quick brown fox", "Dobrý den, pane",
            ]
            for (index, text) in texts.enumerated() {
                _ = try await client.send(text, uid: "t-\(index)", to: room, as: writer)
            }
            let reader = users[2]
            #expect(try await found(client, "zpr", as: reader) == [texts[0]])
            #expect(try await found(client, "prilis", as: reader) == [texts[0]])
            #expect(try await found(client, "ZPRAVA", as: reader) == [texts[0]])
            #expect(try await found(client, "grusse munchen", as: reader) == [texts[1]])
            #expect(try await found(client, "strasse", as: reader) == [texts[1]])
            #expect(try await found(client, "привет дел", as: reader) == [texts[2]])
            #expect(try await found(client, "ПРИВЕТ", as: reader) == [texts[2]])
            #expect(try await found(client, "καλημ", as: reader) == [texts[3]])
            #expect(try await found(client, "天気", as: reader) == [texts[4]])
            #expect(try await found(client, "晴れ", as: reader).isEmpty)
            // Every word must match; phrases match in order.
            #expect(try await found(client, "quick fox", as: reader) == [texts[5]])
            #expect(try await found(client, "quick cat", as: reader).isEmpty)
            #expect(try await found(client, "\"quick brown\"", as: reader) == [texts[5]])
            #expect(try await found(client, "\"brown quick\"", as: reader).isEmpty)
            #expect(try await found(client, "\"dobry den\"", as: reader) == [texts[6]])

            // The highlight marks the matches and escapes everything else.
            let answer = try await search(client, "zprav", as: reader)
            let result = try #require(try decode(ListPage<SearchResultBody>.self, from: answer.text).items.first)
            #expect(result.highlight == "Tady je <mark>zpráva</mark>, je to příliš dlouhé")
            #expect(result.room.id == Int64(room) && result.room.type == .multiparty)
            // Its uid is a string too: `RoomSummary` reads one.
            #expect(result.room.name == "T")
        }
    }

    @Test func editedDeletedAndUnreadableMessagesAreFoundAsTheyAreNow() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let edited = try await client.send("original banana", uid: "e-1", to: room, as: writer)
            _ = try await client.json(
                .patch, "/v1/rooms/\(room)/messages/\(edited.id)", token: token(writer),
                body: #"{"content":"changed mango"}"#)
            let deleted = try await client.send("secret kiwi", uid: "d-1", to: room, as: writer)
            _ = try await client.json(.delete, "/v1/rooms/\(room)/messages/\(deleted.id)", token: token(writer))
            #expect(try await found(client, "banana", as: reader).isEmpty)
            #expect(try await found(client, "mango", as: reader) == ["changed mango"])
            #expect(try await found(client, "kiwi", as: reader).isEmpty)

            // A stranger finds nothing; a former member no longer finds the room's messages.
            let stranger = try await client.signUp()
            #expect(try await found(client, "mango", as: stranger).isEmpty)
            #expect(try await search(client, "mango", as: stranger, room: room).status == .notFound)
            _ = try await client.json(.delete, "/v1/rooms/\(room)/members/\(userID(reader))", token: token(admin))
            #expect(try await found(client, "mango", as: reader).isEmpty)

            // A member through a group finds them.
            let adminToken = try await AdminRoutesTests().signUpAdmin(client, harness)
            let group = try await client.json(
                .post, "/v1/admin/groups", token: adminToken, body: #"{"name":"Searchers"}"#)
            let groupID = try #require(group.json["id"] as? Int)
            _ = try await client.json(
                .put, "/v1/admin/groups/\(groupID)/members/\(userID(stranger))", token: adminToken)
            let roomAdmin = try await AdminRoutesTests().promote(admin, client, harness)
            #expect(
                try await client.json(
                    .put, "/v1/rooms/\(room)/groups/\(groupID)", token: roomAdmin, body: #"{"role":"reader"}"#
                ).status == .noContent)
            #expect(try await found(client, "mango", as: stranger) == ["changed mango"])
            #expect(try await found(client, "mango", as: stranger, room: room) == ["changed mango"])
        }
    }

    @Test func pagesHaveNoDuplicatesOrGapsWhileMessagesArrive() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            for index in 0..<25 {
                _ = try await client.send("paging apple \(index)", uid: "p-\(index)", to: room, as: users[1])
            }
            var seen: [String] = []
            var cursor: String?
            for page in 0..<10 {
                let extra = "&limit=10" + (cursor.map { "&cursor=\($0)" } ?? "")
                let answer = try await search(client, "apple", as: users[2], extra: extra)
                #expect(answer.status == .ok)
                let results = try decode(ListPage<SearchResultBody>.self, from: answer.text)
                seen += results.items.map(\.message.content)
                // Newer messages arrive meanwhile: they are above the cursor, not in later pages.
                _ = try await client.send("paging apple new \(page)", uid: "n-\(page)", to: room, as: users[1])
                cursor = results.nextCursor
                if cursor == nil { break }
            }
            #expect(seen == (0..<25).reversed().map { "paging apple \($0)" })
        }
    }

    @Test func hostileQueriesGetAClearAnswerNeverAServerError() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            _ = try await client.send(
                "<b>bold</b> & \"quoted\" it's 100% (really) \\ back", uid: "h-1", to: room, as: users[1])
            let reader = users[2]
            for q in ["a", String(repeating: "x", count: 201)] {
                let answer = try await search(client, q, as: reader)
                #expect(answer.status == .badRequest && answer.problem?.field == "q")
            }
            #expect(try await client.json(.get, "/v1/search/messages", token: token(reader)).status == .badRequest)
            let nul = try await client.json(.get, "/v1/search/messages?q=ab%00cd", token: token(reader))
            #expect(nul.status == .badRequest)
            let invalid = try await client.json(.get, "/v1/search/messages?q=%FF%FEab", token: token(reader))
            #expect(invalid.status.code < 500)
            let long = try await client.json(
                .get, "/v1/search/messages?q=" + String(repeating: "a%20", count: 2_500), token: token(reader))
            #expect(long.status == .badRequest)
            for q in ["'; DROP TABLE x; --", "a & b | !c", "(x:* <-> y)", "%_%", ".*[", "\\\\'", "':*", "100%", "\"\""]
            {
                let answer = try await search(client, q, as: reader)
                #expect(answer.status.code < 500, "\(q): \(answer.text)")
            }
            // Matches are marked, the rest escaped: no HTML gets through.
            let answer = try await search(client, "bold", as: reader)
            let highlight = try #require(
                try decode(ListPage<SearchResultBody>.self, from: answer.text).items.first?.highlight)
            #expect(
                highlight
                    == "&lt;b&gt;<mark>bold</mark>&lt;/b&gt; &amp; &quot;quoted&quot; it&#39;s 100% (really) \\ back")
            #expect(try await found(client, "100", as: reader).count == 1)
            #expect(try await found(client, "really back", as: reader).count == 1)
        }
    }

    @Test func roomsAreFoundByTheirNameOrTheirPeersName() async throws {
        try await APIHarness.make().run { client in
            let users = try await client.signUp(count: 3)
            let named = try await client.createRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "Účetní oddělení",
                firstMessage: (content: "hi", uid: "r-1"))
            _ = try await client.json(
                .patch, "/v1/me", token: token(users[1]), body: #"{"firstName":"Jiří","lastName":"Novák"}"#)
            let pair = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            func rooms(_ q: String, as user: LoginResponse) async throws -> [Int64] {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? q
                let answer = try await client.json(.get, "/v1/search/rooms?q=\(encoded)", token: token(user))
                #expect(answer.status == .ok && answer.json.keys.contains("nextCursor"))
                return try decode(RoomsResponse.self, from: answer.text).rooms.map(\.id)
            }
            #expect(try await rooms("ucetni", as: users[0]) == [named.id])
            #expect(try await rooms("ODDEL", as: users[2]) == [named.id])
            #expect(try await rooms("jiri nov", as: users[0]) == [pair.id])
            #expect(try await rooms("ucetni", as: try await client.signUp()).isEmpty)
            #expect(try await client.json(.get, "/v1/search/rooms?q=x", token: token(users[0])).status == .badRequest)
        }
    }
}
