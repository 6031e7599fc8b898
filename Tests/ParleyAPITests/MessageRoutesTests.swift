import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParleyAPI
import Testing

struct MessageRoutesTests {
    /// A room of three writers; returns the room id and the three logins.
    @Test func fiftyConcurrentSendsGetSeq1To50WithoutGapOrDuplicate() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let senders = [token(users[0]), token(users[1])]
            let seqs = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<50 {
                    let sender = senders[index % 2]
                    group.addTask {
                        let answer = try await client.json(
                            .post, "/v1/rooms/\(id)/messages", token: sender,
                            body: #"{"content":"m\#(index)","uid":"c-\#(index)"}"#)
                        return answer.json["seq"] as? Int ?? -1
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(seqs.sorted() == Array(2...51))
            let history = try await client.json(.get, "/v1/rooms/\(id)/messages?limit=200", token: senders[0])
            let stored = (history.json["messages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int }
            #expect(stored == Array(1...51))
        }
    }

    @Test func aRetriedUIDIsStoredOnce() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let body = #"{"content":"hello","uid":"retry-1"}"#
            let first = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            let again = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(first.status == .created)
            #expect(again.status == .ok)
            #expect(first.text == again.text)
            #expect(
                Set(first.json.keys) == [
                    "id", "seq", "chatRoomId", "chatRoomUid", "sentById", "content", "uid", "createdAt",
                ])
            #expect(first.json["sentById"] as? Int == Int(userID(users[1])))
            // Another sender may use the same uid.
            let other = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: body)
            #expect(other.status == .created)
            #expect(other.json["seq"] as? Int == 3)
        }
    }

    @Test func concurrentRetriesOfOneUIDStoreItOnceAndAllGetIt() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let sender = token(users[1])
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let answer = try await client.json(
                            .post, "/v1/rooms/\(id)/messages", token: sender,
                            body: #"{"content":"once","uid":"race-1"}"#)
                        return (answer.status, answer.text)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // One send stored it; every other one, racing or late, answers with the same message.
            #expect(answers.filter { $0.0 == .created }.count == 1)
            #expect(answers.filter { $0.0 == .ok }.count == 11)
            #expect(Set(answers.map(\.1)).count == 1)
            let history = try await client.json(.get, "/v1/rooms/\(id)/messages", token: sender)
            #expect((history.json["messages"] as? [[String: Any]])?.count == 2)
        }
    }

    @Test func historyPagesInAscendingOrder() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let me = token(users[0])
            for index in 2...10 {
                _ = try await client.json(
                    .post, "/v1/rooms/\(id)/messages", token: me, body: #"{"content":"m","uid":"h\#(index)"}"#)
            }
            func seqs(_ query: String) async throws -> ([Int], Bool) {
                let answer = try await client.json(.get, "/v1/rooms/\(id)/messages?\(query)", token: me)
                return (
                    (answer.json["messages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } ?? [],
                    answer.json["hasMore"] as? Bool ?? false
                )
            }
            #expect(try await seqs("limit=3") == ([8, 9, 10], true))
            #expect(try await seqs("before=8&limit=3") == ([5, 6, 7], true))
            #expect(try await seqs("before=3&limit=3") == ([1, 2], false))
            #expect(try await seqs("after=7&limit=2") == ([8, 9], true))
            #expect(try await seqs("after=8&limit=5") == ([9, 10], false))
            #expect(try await seqs("after=2&before=6") == ([3, 4, 5], false))
            let future = JSONCodingDate.farFuture
            #expect(try await seqs("since=\(future)") == ([], false))
            // Without a lower bound the page is the newest below the upper one, as with `before`.
            #expect(try await seqs("until=\(future)&limit=2").0 == [9, 10])
            let bad = try await client.json(.get, "/v1/rooms/\(id)/messages?limit=0", token: me)
            #expect(bad.json["field"] as? String == "limit")
            let badTime = try await client.json(.get, "/v1/rooms/\(id)/messages?since=yesterday", token: me)
            #expect(badTime.json["field"] as? String == "since")
        }
    }

    @Test func historysNextCursorWalksThePagesInTheirReadingDirection() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let me = token(users[0])
            for index in 2...7 {
                _ = try await client.json(
                    .post, "/v1/rooms/\(id)/messages", token: me, body: #"{"content":"m","uid":"c\#(index)"}"#)
            }
            /// Every page from `first` on, following `nextCursor` (at most 10 pages).
            func walk(_ first: String) async throws -> [[Int]] {
                var pages: [[Int]] = []
                var query: String? = first
                while let next = query, pages.count < 10 {
                    let answer = try await client.json(.get, "/v1/rooms/\(id)/messages?\(next)", token: me)
                    pages.append((answer.json["messages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } ?? [])
                    #expect((answer.json["nextCursor"] is NSNull) == !(answer.json["hasMore"] as? Bool ?? true))
                    query = (answer.json["nextCursor"] as? String).map { "limit=3&cursor=\($0)" }
                }
                return pages
            }
            #expect(try await walk("limit=3") == [[5, 6, 7], [2, 3, 4], [1]])
            #expect(try await walk("limit=3&after=0") == [[1, 2, 3], [4, 5, 6], [7]])
            // Both bounds: the cursor keeps the upper one.
            #expect(try await walk("limit=3&after=0&before=7") == [[1, 2, 3], [4, 5, 6]])
            for bad in [
                "cursor=sideways:3", "cursor=before:x", "cursor=before:3&after=1", "cursor=before:3,before:4",
                "cursor=", "cursor=after:1,",
            ] {
                let refused = try await client.json(.get, "/v1/rooms/\(id)/messages?\(bad)", token: me)
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.json["field"] as? String == "cursor")
            }
        }
    }

    @Test func membersAndRoomFilesPageLikeEveryOtherList() async throws {
        let harness = try await AccountsHarness.make()
        try await harness.run { client in
            var users: [[String: Any]] = []
            for _ in 0..<5 { users.append(try await client.signUp()) }
            let room = try await client.multipartyRoom(
                by: users[0], members: users.dropFirst().map { ($0, "writer") }, name: "Paged")
            let me = token(users[0])
            /// Every page of a list, following `nextCursor` (at most 10 pages).
            func walk(_ path: String, _ key: String, id: (([String: Any]) -> Int?)) async throws -> [[Int]] {
                var pages: [[Int]] = []
                var cursor: String? = ""
                while let next = cursor, pages.count < 10 {
                    let query = next.isEmpty ? "limit=2" : "limit=2&cursor=\(next)"
                    let answer = try await client.json(.get, "\(path)?\(query)", token: me)
                    #expect(answer.status == .ok, "\(answer.text)")
                    pages.append((answer.json[key] as? [[String: Any]])?.compactMap(id) ?? [])
                    #expect(answer.json.keys.contains("nextCursor"))
                    cursor = answer.json["nextCursor"] as? String
                }
                return pages
            }
            let ids = users.map { Int(userID($0)) }.sorted()
            let members = try await walk("/v1/rooms/\(room.id)/members", "members") {
                ($0["user"] as? [String: Any])?["id"] as? Int
            }
            #expect(members == [[ids[0], ids[1]], [ids[2], ids[3]], [ids[4]]])

            var files: [Int] = []
            for index in 0..<4 {
                let upload = try await client.execute(
                    uri: "/v1/files?name=f\(index).bin", method: .post,
                    headers: [.authorization: "Bearer \(me)", .contentType: "application/octet-stream"],
                    body: ByteBuffer(string: "file \(index)")
                ) { response in (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any]
                }
                let file = try #require(upload?["id"] as? Int)
                files.append(file)
                _ = try await client.json(
                    .post, "/v1/rooms/\(room.id)/messages", token: me,
                    body: #"{"content":"","uid":"file-\#(index)","fileId":\#(file)}"#)
            }
            let pages = try await walk("/v1/rooms/\(room.id)/files", "files") { $0["id"] as? Int }
            #expect(pages == [[files[3], files[2]], [files[1], files[0]]], "newest first")
            let bad = try await client.json(.get, "/v1/rooms/\(room.id)/files?cursor=x", token: me)
            #expect(bad.json["field"] as? String == "cursor")
        }
    }

    @Test func readMarkersMoveForwardOnlyAndDriveUnreadCounts() async throws {
        try await AccountsHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            var ids: [Int] = []
            for index in 0..<3 {
                let sent = try await client.json(
                    .post, "/v1/rooms/\(id)/messages", token: token(users[0]),
                    body: #"{"content":"m","uid":"r\#(index)"}"#)
                ids.append(sent.json["id"] as? Int ?? 0)
            }
            func unread() async throws -> (Int?, Int?) {
                let room = try await client.json(.get, "/v1/rooms/\(id)", token: token(users[2]))
                return (room.json["unreadCount"] as? Int, room.json["lastReadMessageId"] as? Int)
            }
            func read(_ body: String) async throws -> (status: HTTPResponse.Status, messageId: Int?, seq: Int?) {
                let answer = try await client.json(.post, "/v1/rooms/\(id)/read", token: token(users[2]), body: body)
                return (answer.status, answer.json["messageId"] as? Int, answer.json["seq"] as? Int)
            }
            #expect(try await unread().0 == 4)
            let before = try await client.json(.get, "/v1/rooms/\(id)", token: token(users[2]))
            #expect(before.json["lastReadSeq"] is NSNull)
            // By id (messages seq 2-4 follow the room's first message, seq 1).
            #expect(try await read(#"{"messageId":\#(ids[1])}"#) == (.ok, ids[1], 3))
            #expect(try await unread() == (1, ids[1]))
            // It never moves back: the answer is where it stands.
            #expect(try await read(#"{"messageId":\#(ids[0])}"#) == (.ok, ids[1], 3))
            #expect(try await read(#"{"seq":2}"#) == (.ok, ids[1], 3))
            #expect(try await unread() == (1, ids[1]))
            // By seq, as history pages.
            #expect(try await read(#"{"seq":4}"#) == (.ok, ids[2], 4))
            let after = try await client.json(.get, "/v1/rooms/\(id)", token: token(users[2]))
            #expect(after.json["lastReadSeq"] as? Int == 4)
            #expect(after.json["unreadCount"] as? Int == 0)
            #expect(try await read(#"{"messageId":999999}"#).status == .notFound)
            #expect(try await read(#"{"seq":99}"#).status == .notFound)
            #expect(try await read(#"{"messageId":\#(ids[2]),"seq":4}"#).status == .badRequest)
            #expect(try await read("{}").status == .badRequest)
            let list = try await client.json(.get, "/v1/rooms?messages=2", token: token(users[2]))
            let room = try #require((list.json["rooms"] as? [[String: Any]])?.first)
            #expect(room["unreadCount"] as? Int == 0)
            #expect((room["latestMessages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [3, 4])
        }
    }

    @Test func rolesThroughAGroupAndAnApplicationRoleComeAndGoWithTheirLinks() async throws {
        let harness = try await AccountsHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let admin = token(users[0])
            let viaGroup = try await client.signUp()
            let viaRole = try await client.signUp()
            let groupID = try await harness.database.client.query(
                "INSERT INTO cloud.user_group (name) VALUES ('g-' || md5(random()::text)) RETURNING id", logger: .quiet
            ).single(Int64.self)
            try await harness.database.client.query(
                "INSERT INTO cloud.user_account_to_user_group VALUES (\(groupID), \(userID(viaGroup)))", logger: .quiet)
            let appRoleID = try await harness.database.client.query(
                """
                WITH app AS (INSERT INTO cloud.app (code, name) VALUES ('a' || substr(md5(random()::text), 1, 8), 'A')
                             RETURNING id)
                INSERT INTO cloud.role (app_id, code, name) SELECT id, 'foreman', 'Foreman' FROM app RETURNING id
                """, logger: .quiet
            ).single(Int64.self)
            try await harness.database.client.query(
                "INSERT INTO cloud.user_account_to_role (user_account_id, role_id) VALUES (\(userID(viaRole)), \(appRoleID))",
                logger: .quiet)

            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(viaGroup)).status == .notFound)
            #expect(
                try await client.json(
                    .put, "/v1/rooms/\(id)/groups/\(groupID)", token: admin, body: #"{"role":"writer"}"#
                )
                .status == .noContent)
            #expect(
                try await client.json(
                    .put, "/v1/rooms/\(id)/app-roles/\(appRoleID)", token: admin, body: #"{"role":"reader"}"#
                )
                .status == .noContent)
            #expect(
                try await client.json(.get, "/v1/rooms/\(id)", token: token(viaGroup)).json["myRole"] as? String
                    == "writer")
            #expect(
                try await client.json(.get, "/v1/rooms/\(id)", token: token(viaRole)).json["myRole"] as? String
                    == "reader")
            let sent = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(viaGroup), body: #"{"content":"via group","uid":"g1"}"#)
            #expect(sent.status == .created)
            let members = try await client.json(.get, "/v1/rooms/\(id)/members", token: admin)
            let entry = (members.json["members"] as? [[String: Any]])?.first {
                ($0["user"] as? [String: Any])?["id"] as? Int == Int(userID(viaGroup))
            }
            #expect(entry?["via"] as? [String] == ["group:\(groupID)"])

            // The highest role over all paths wins.
            _ = try await client.json(
                .put, "/v1/rooms/\(id)/members/\(userID(viaRole))", token: admin, body: #"{"role":"admin"}"#)
            #expect(
                try await client.json(.get, "/v1/rooms/\(id)", token: token(viaRole)).json["myRole"] as? String
                    == "admin")
            _ = try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(viaRole))", token: admin)
            #expect(
                try await client.json(.get, "/v1/rooms/\(id)", token: token(viaRole)).json["myRole"] as? String
                    == "reader")

            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/groups/\(groupID)", token: admin).status == .noContent)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/app-roles/\(appRoleID)", token: admin).status
                    == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(viaGroup)).status == .notFound)
            #expect(try await client.json(.get, "/v1/rooms/\(id)", token: token(viaRole)).status == .notFound)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/groups/\(groupID)", token: admin).status == .notFound)
            #expect(
                try await client.json(.put, "/v1/rooms/\(id)/groups/999999", token: admin, body: #"{"role":"reader"}"#)
                    .status
                    == .notFound)
        }
    }

    @Test func roomListsArePagedNewestActivityFirstAndSyncLightly() async throws {
        try await AccountsHarness.make().run { client in
            let me = try await client.signUp()
            var peers: [[String: Any]] = []
            for _ in 0..<3 { peers.append(try await client.signUp()) }
            var roomIDs: [Int] = []
            for peer in peers {
                roomIDs.append(
                    try await client.json(.put, "/v1/rooms/direct/\(userID(peer))", token: token(me)).json["id"] as? Int
                        ?? 0)
            }
            _ = try await client.json(
                .post, "/v1/rooms/\(roomIDs[0])/messages", token: token(me), body: #"{"content":"bump","uid":"b"}"#)
            let first = try await client.json(.get, "/v1/rooms?limit=2", token: token(me))
            let page1 = (first.json["rooms"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
            #expect(page1 == [roomIDs[0], roomIDs[2]])
            let cursor = try #require(first.json["nextCursor"] as? String)
            let second = try await client.json(.get, "/v1/rooms?limit=2&cursor=\(cursor)", token: token(me))
            #expect((second.json["rooms"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [roomIDs[1]])
            #expect(second.json["nextCursor"] is NSNull)
            #expect(
                try await client.json(.get, "/v1/rooms?cursor=garbage", token: token(me)).json["field"] as? String
                    == "cursor")

            let now = JSONCodingDate.now
            try await Task.sleep(for: .milliseconds(20))
            _ = try await client.json(
                .post, "/v1/rooms/\(roomIDs[1])/messages", token: token(me), body: #"{"content":"later","uid":"l"}"#)
            let light = try await client.json(.get, "/v1/rooms?since=\(now)", token: token(me))
            #expect((light.json["rooms"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [roomIDs[1]])
        }
    }
}

/// Timestamps for query strings.
enum JSONCodingDate {
    static var now: String { format(Date()) }
    static var farFuture: String { format(Date(timeIntervalSinceNow: 86400 * 365)) }
    static func format(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }
}
