import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParleyCore
import Testing

@testable import ParleyAPI

struct MessageRoutesTests {
    /// A room of three writers; returns the room id and the three logins.
    @Test func fiftyConcurrentSendsGetSeq1To50WithoutGapOrDuplicate() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let senders = [users[0], users[1]]
            let seqs = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<50 {
                    let sender = senders[index % 2]
                    group.addTask {
                        Int(try await client.send("m\(index)", uid: "c-\(index)", to: id, as: sender).seq)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(seqs.sorted() == Array(2...51))
            let stored = try await client.history(id, "limit=200", as: users[0]).messages.map(\.seq)
            #expect(stored == Array(1...51))
        }
    }

    @Test func aRetriedUIDIsStoredOnce() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let body = #"{"content":"hello","uid":"retry-1"}"#
            let first = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            let again = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(first.status == .created)
            #expect(again.status == .ok)
            #expect(first.text == again.text)
            #expect(
                Set(first.json.keys) == [
                    "id", "seq", "chatRoomId", "chatRoomUid", "sentById", "content", "uid", "createdAt", "editedAt",
                    "deletedAt", "deletedById", "replyTo", "replyCount", "mentions", "reactions", "type", "metadata",
                    "attachments", "receipts",
                ])
            let message = try JSONCoding.decoder.decode(Message.self, from: Data(first.text.utf8))
            #expect(message.sentById == userID(users[1]))
            #expect(message.content == "hello" && message.uid == "retry-1" && message.chatRoomId == id)
            // Another sender may use the same uid.
            let other = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[0]), body: body)
            #expect(other.status == .created)
            #expect(other.json["seq"] as? Int == 3)
        }
    }

    @Test func concurrentRetriesOfOneUIDStoreItOnceAndAllGetIt() async throws {
        try await APIHarness.make().run { client in
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
            #expect(try await client.history(id, as: users[1]).messages.count == 2)
        }
    }

    @Test func historyPagesInAscendingOrder() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let me = token(users[0])
            for index in 2...10 { try await client.send(uid: "h\(index)", to: id, as: users[0]) }
            func seqs(_ query: String) async throws -> ([Int64], Bool) {
                let page = try await client.history(id, query, as: users[0])
                return (page.messages.map(\.seq), page.hasMore)
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
            #expect(bad.problem?.field == "limit")
            let badTime = try await client.json(.get, "/v1/rooms/\(id)/messages?since=yesterday", token: me)
            #expect(badTime.problem?.field == "since")
        }
    }

    @Test func historysNextCursorWalksThePagesInTheirReadingDirection() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let me = token(users[0])
            for index in 2...7 { try await client.send(uid: "c\(index)", to: id, as: users[0]) }
            /// Every page from `first` on, following `nextCursor`, which is null exactly on the last.
            func walk(_ first: String) async throws -> [[Int64]] {
                var pages: [[Int64]] = []
                var query: String? = first
                while let next = query, pages.count < 10 {
                    let page = try await client.history(id, next, as: users[0])
                    pages.append(page.messages.map(\.seq))
                    #expect((page.nextCursor == nil) == !page.hasMore)
                    query = page.nextCursor.map { "limit=3&cursor=\($0)" }
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
                #expect(refused.problem?.field == "cursor")
            }
        }
    }

    @Test func membersAndRoomFilesPageLikeEveryOtherList() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let users = try await client.signUp(count: 5)
            let room = try await client.multipartyRoom(
                by: users[0], members: users.dropFirst().map { ($0, "writer") }, name: "Paged")
            let me = token(users[0])
            let ids = users.map(userID).sorted()
            let members = try await client.pages(
                ListPage<MemberResponse>.self, "/v1/rooms/\(room.id)/members?limit=2", token: me
            ) { ($0.items.map(\.user.id), $0.nextCursor) }
            #expect(members == [[ids[0], ids[1]], [ids[2], ids[3]], [ids[4]]])

            var files: [Int64] = []
            for index in 0..<4 {
                let upload = try await client.execute(
                    uri: "/v1/files?name=f\(index).bin", method: .post,
                    headers: [.authorization: "Bearer \(me)", .contentType: "application/octet-stream"],
                    body: ByteBuffer(string: "file \(index)")
                ) { response in try? JSONCoding.decoder.decode(FileObject.self, from: Data(buffer: response.body)) }
                let file = try #require(upload?.id)
                files.append(file)
                _ = try await client.json(
                    .post, "/v1/rooms/\(room.id)/messages", token: me,
                    body: #"{"content":"","uid":"file-\#(index)","fileId":\#(file)}"#)
            }
            let pages = try await client.pages(
                ListPage<FileObject>.self, "/v1/rooms/\(room.id)/files?limit=2", token: me
            ) {
                ($0.items.map(\.id), $0.nextCursor)
            }
            #expect(pages == [[files[3], files[2]], [files[1], files[0]]], "newest first")
            let bad = try await client.json(.get, "/v1/rooms/\(room.id)/files?cursor=x", token: me)
            #expect(bad.problem?.field == "cursor")
        }
    }

    @Test func readMarkersMoveForwardOnlyAndDriveUnreadCounts() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            var ids: [Int] = []
            for index in 0..<3 { ids.append(Int(try await client.send(uid: "r\(index)", to: id, as: users[0]).id)) }
            func room() async throws -> RoomResponse {
                try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(id)", token: token(users[2]))
            }
            func unread() async throws -> (Int64?, Int?) {
                let room = try await room()
                return (room.unreadCount, room.lastReadMessageId.map(Int.init))
            }
            func read(_ body: String) async throws -> (status: HTTPResponse.Status, messageId: Int?, seq: Int?) {
                let answer = try await client.json(.post, "/v1/rooms/\(id)/read", token: token(users[2]), body: body)
                return (answer.status, answer.json["messageId"] as? Int, answer.json["seq"] as? Int)
            }
            #expect(try await unread().0 == 4)
            #expect(try await room().lastReadSeq == nil)
            // By id (messages seq 2-4 follow the room's first message, seq 1).
            #expect(try await read(#"{"messageId":\#(ids[1])}"#) == (.ok, ids[1], 3))
            #expect(try await unread() == (1, ids[1]))
            // It never moves back: the answer is where it stands.
            #expect(try await read(#"{"messageId":\#(ids[0])}"#) == (.ok, ids[1], 3))
            #expect(try await read(#"{"seq":2}"#) == (.ok, ids[1], 3))
            #expect(try await unread() == (1, ids[1]))
            // By seq, as history pages.
            #expect(try await read(#"{"seq":4}"#) == (.ok, ids[2], 4))
            let after = try await room()
            #expect(after.lastReadSeq == 4 && after.unreadCount == 0)
            #expect(try await read(#"{"messageId":999999}"#).status == .notFound)
            #expect(try await read(#"{"seq":99}"#).status == .notFound)
            #expect(try await read(#"{"messageId":\#(ids[2]),"seq":4}"#).status == .badRequest)
            #expect(try await read("{}").status == .badRequest)
            let list = try await client.decoded(
                RoomsResponse.self, .get, "/v1/rooms?messages=2", token: token(users[2]))
            let listed = try #require(list.rooms.first)
            #expect(listed.unreadCount == 0)
            #expect(listed.latestMessages?.map(\.seq) == [3, 4])
        }
    }

    @Test func rolesThroughAGroupAndAnApplicationRoleComeAndGoWithTheirLinks() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            // Linking groups and application roles needs a system administrator.
            let admin = try await AdminRoutesTests().promote(users[0], client, harness)
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
            let members = try await client.decoded(
                ListPage<MemberResponse>.self, .get, "/v1/rooms/\(id)/members", token: admin)
            let entry = members.items.first { $0.user.id == userID(viaGroup) }
            #expect(entry?.via == ["group:\(groupID)"])

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
        try await APIHarness.make().run { client in
            let me = try await client.signUp()
            var roomIDs: [Int64] = []
            for peer in try await client.signUp(count: 3) {
                let room = try await client.decoded(
                    RoomResponse.self, .put, "/v1/rooms/direct/\(userID(peer))", token: token(me))
                #expect(room.peer?.id == userID(peer) && room.type == .twoparty)
                roomIDs.append(room.id)
            }
            try await client.send("bump", uid: "b", to: Int(roomIDs[0]), as: me)
            let pages = try await client.pages(RoomsResponse.self, "/v1/rooms?limit=2", token: token(me)) {
                ($0.rooms.map(\.id), $0.nextCursor)
            }
            #expect(pages == [[roomIDs[0], roomIDs[2]], [roomIDs[1]]])
            #expect(
                try await client.json(.get, "/v1/rooms?cursor=garbage", token: token(me)).problem?.field
                    == "cursor")
            // A cursor at the ends of its numbers' range pages like any other, not a failure.
            for (activity, expected) in [(Int64.max, [roomIDs[0], roomIDs[2], roomIDs[1]]), (Int64.min, [])] {
                let cursor = Base64URL.encode(Array("\(activity):\(Int64.max)".utf8))
                let page = try await client.decoded(
                    RoomsResponse.self, .get, "/v1/rooms?cursor=\(cursor)", token: token(me))
                #expect(page.rooms.map(\.id) == expected)
            }

            let now = JSONCodingDate.now
            try await Task.sleep(for: .milliseconds(20))
            try await client.send("later", uid: "l", to: Int(roomIDs[1]), as: me)
            let light = try await client.decoded(RoomsResponse.self, .get, "/v1/rooms?since=\(now)", token: token(me))
            #expect(light.rooms.map(\.id) == [roomIDs[1]])
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
