import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import PostgresNIO
import Testing

@testable import ParleyAPI

/// Edits, tombstones, reactions, replies, mentions and the `changedSince` sync over REST,
/// on real PostgreSQL.
struct MessageActionRoutesTests {
    @Test func theSenderEditsTheirMessageAndNobodyElseCan() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let sent = try await client.send("helo", uid: "e-1", to: id, as: writer)
            let path = "/v1/rooms/\(id)/messages/\(sent.id)"
            #expect(sent.editedAt == nil)

            let edited = try await client.decoded(
                Message.self, .patch, path, token: token(writer), body: #"{"content":"hello"}"#)
            #expect(edited.content == "hello" && edited.seq == sent.seq && edited.uid == "e-1")
            let editedAt = try #require(edited.editedAt)
            // The same content again changes nothing.
            let again = try await client.decoded(
                Message.self, .patch, path, token: token(writer), body: #"{"content":"hello"}"#)
            #expect(again.editedAt == editedAt)
            #expect(try await client.history(id, as: reader).messages.last?.content == "hello")

            // An admin may delete but not edit others' messages; a reader edits nothing.
            for other in [admin, reader] {
                let refused = try await client.json(.patch, path, token: token(other), body: #"{"content":"x"}"#)
                #expect(refused.status == .forbidden)
            }
            let outsider = try await client.signUp()
            #expect(
                try await client.json(.patch, path, token: token(outsider), body: #"{"content":"x"}"#).status
                    == .notFound)
            // Content rules as for sending.
            let empty = try await client.json(.patch, path, token: token(writer), body: #"{"content":""}"#)
            #expect(empty.status == .badRequest && empty.problem?.field == "content")
            let long = String(repeating: "a", count: 20_001)
            #expect(
                try await client.json(.patch, path, token: token(writer), body: #"{"content":"\#(long)"}"#).status
                    == .badRequest)
            // Unknown ids and ids of another room are not messages of this room.
            let (otherRoom, _) = try await client.roomOfThree()
            #expect(
                try await client.json(
                    .patch, "/v1/rooms/\(otherRoom)/messages/\(sent.id)", token: token(writer),
                    body: #"{"content":"x"}"#
                ).status == .notFound)
            #expect(
                try await client.json(
                    .patch, "/v1/rooms/\(id)/messages/999999999", token: token(writer), body: #"{"content":"x"}"#
                ).status == .notFound)
            #expect(
                try await client.json(
                    .patch, "/v1/rooms/\(id)/messages/abc", token: token(writer), body: #"{"content":"x"}"#
                ).status == .notFound)

            // A deleted message is not edited.
            #expect(try await client.json(.delete, path, token: token(writer)).status == .noContent)
            let late = try await client.json(.patch, path, token: token(writer), body: #"{"content":"again"}"#)
            #expect(late.status == .conflict && late.problem?.code == "message-deleted")
        }
    }

    @Test func aDeletedMessageStaysAsATombstoneInItsPlace() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let mine = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"mine","uid":"d-1","mentions":[\#(userID(reader))]}"#)
            let theirs = try await client.send("theirs", uid: "d-2", to: id, as: admin)
            _ = try await client.send("after", uid: "d-3", to: id, as: writer)
            _ = try await client.json(
                .put, "/v1/rooms/\(id)/messages/\(mine.id)/reactions/%F0%9F%91%8D", token: token(admin))

            // The light sync from before the deletions brings the room with its tombstones.
            try await Task.sleep(for: .milliseconds(5))
            let beforeDeletions = JSONCoding.timestamp(Date())
            try await Task.sleep(for: .milliseconds(5))

            // A writer deletes only their own; an admin anyone's; a reader nothing.
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(theirs.id)", token: token(writer)).status
                    == .forbidden)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(mine.id)", token: token(reader)).status
                    == .forbidden)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(mine.id)", token: token(writer)).status
                    == .noContent)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(theirs.id)", token: token(admin)).status
                    == .noContent)
            // Twice is still 204, and nothing changes.
            let before = try await client.history(id, as: reader).messages
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(mine.id)", token: token(writer)).status
                    == .noContent)
            let history = try await client.history(id, as: reader).messages
            #expect(history == before)

            // No gap: every seq is there, the deleted ones as tombstones.
            #expect(history.map(\.seq) == [1, 2, 3, 4])
            let tombstone = try #require(history.first { $0.id == mine.id })
            #expect(tombstone.content == "" && tombstone.file == nil && tombstone.reactions.isEmpty)
            #expect(tombstone.mentions.isEmpty)
            #expect(tombstone.deletedById == userID(writer) && tombstone.deletedAt != nil)
            #expect(history.first { $0.id == theirs.id }?.deletedById == userID(admin))
            #expect(history.last?.content == "after" && history.last?.deletedAt == nil)

            // The room list's latest messages and the room's lastSeq agree; lastSeq never moves back.
            let rooms = try await client.decoded(
                RoomsResponse.self, .get, "/v1/rooms?messages=3", token: token(reader))
            let room = try #require(rooms.rooms.first { $0.id == id })
            #expect(room.lastSeq == 4)
            #expect(room.latestMessages?.map(\.content) == ["", "", "after"])
            let synced = try await client.decoded(
                RoomsResponse.self, .get, "/v1/rooms?messages=3&since=\(beforeDeletions)", token: token(reader))
            #expect(synced.rooms.map(\.id) == [Int64(id)])
            #expect(synced.rooms.first?.latestMessages?.first?.deletedAt != nil)
            // The reactions went with the message.
            let reactions = try await harness.database.client.query(
                "SELECT count(*) FROM messenger.reaction WHERE message_id = \(mine.id)", logger: .quiet
            ).single(Int64.self)
            #expect(reactions == 0)
        }
    }

    @Test func reactionsAreCountedPerKeyWithTheCallersOwnMarked() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let sent = try await client.send("react to me", uid: "r-1", to: id, as: writer)
            let base = "/v1/rooms/\(id)/messages/\(sent.id)/reactions"
            let thumbs = "%F0%9F%91%8D"
            #expect(try await client.json(.put, "\(base)/\(thumbs)", token: token(admin)).status == .noContent)
            #expect(try await client.json(.put, "\(base)/\(thumbs)", token: token(admin)).status == .noContent)
            #expect(try await client.json(.put, "\(base)/\(thumbs)", token: token(writer)).status == .noContent)
            #expect(try await client.json(.put, "\(base)/:tada:", token: token(writer)).status == .noContent)
            // A family emoji (one grapheme of several scalars) and a flag are one key each.
            #expect(
                try await client.json(
                    .put, "\(base)/%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7", token: token(writer)
                ).status == .noContent)
            #expect(
                try await client.json(.put, "\(base)/%F0%9F%87%A8%F0%9F%87%BF", token: token(writer)).status
                    == .noContent)
            // A reader cannot react; bad keys are refused.
            #expect(try await client.json(.put, "\(base)/\(thumbs)", token: token(reader)).status == .forbidden)
            for bad in ["a", "1", ":Tada:", "::", "%F0%9F%91%8D%F0%9F%91%8D", ":\(String(repeating: "a", count: 33)):"]
            {
                let refused = try await client.json(.put, "\(base)/\(bad)", token: token(writer))
                #expect(refused.status == .badRequest, "key \(bad)")
                #expect(refused.problem?.field == "key")
            }

            let seenByAdmin = try await client.history(id, as: admin).messages.last?.reactions
            #expect(seenByAdmin?.first == ReactionSummary(key: "👍", count: 2, me: true))
            #expect(seenByAdmin?.map(\.key) == ["👍", ":tada:", "👨‍👩‍👧", "🇨🇿"])
            // A retried send answers with the message as it stands.
            let retried = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer), body: #"{"content":"react to me","uid":"r-1"}"#
            )
            #expect(retried.status == .ok)
            let retriedMessage = try JSONCoding.decoder.decode(Message.self, from: Data(retried.text.utf8))
            #expect(retriedMessage.reactions.first == ReactionSummary(key: "👍", count: 2, me: true))
            let seenByReader = try await client.history(id, as: reader).messages.last?.reactions
            #expect(seenByReader?.first == ReactionSummary(key: "👍", count: 2, me: false))

            let who = try await client.json(.get, "\(base)/\(thumbs)?limit=1", token: token(reader))
            #expect(who.status == .ok)
            let firstPage = try decode(ListPage<UserResponse>.self, from: who.text)
            #expect(firstPage.items.count == 1 && firstPage.nextCursor != nil)
            let everyone = try await client.pages(
                ListPage<UserResponse>.self, "\(base)/\(thumbs)?limit=1", token: token(reader)
            ) { ($0.items.map(\.id), $0.nextCursor) }
            #expect(everyone.flatMap { $0 }.sorted() == [userID(admin), userID(writer)].sorted())

            // Removing is idempotent; a key nobody uses any more leaves the list.
            #expect(try await client.json(.delete, "\(base)/:tada:", token: token(writer)).status == .noContent)
            #expect(try await client.json(.delete, "\(base)/:tada:", token: token(writer)).status == .noContent)
            let after = try await client.history(id, as: writer).messages.last?.reactions
            #expect(after?.map(\.key) == ["👍", "👨‍👩‍👧", "🇨🇿"])
            #expect(
                try await client.json(.put, "/v1/rooms/\(id)/messages/999999999/reactions/:x:", token: token(writer))
                    .status == .notFound)
        }
    }

    @Test func aMessageCarriesAtMostTwentyKeysAndATombstoneNone() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let sent = try await client.send("many", uid: "k-1", to: id, as: users[1])
            let base = "/v1/rooms/\(id)/messages/\(sent.id)/reactions"
            for index in 0..<20 {
                #expect(try await client.json(.put, "\(base)/:k\(index):", token: token(users[1])).status == .noContent)
            }
            let tooMany = try await client.json(.put, "\(base)/:k20:", token: token(users[0]))
            #expect(tooMany.status == .conflict && tooMany.problem?.code == "too-many-reactions")
            // An existing key may still be used by others.
            #expect(try await client.json(.put, "\(base)/:k0:", token: token(users[0])).status == .noContent)

            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(users[1])).status
                    == .noContent)
            let deleted = try await client.json(.put, "\(base)/:k0:", token: token(users[0]))
            #expect(deleted.status == .conflict && deleted.problem?.code == "message-deleted")
        }
    }

    @Test func fiftyUsersTogglingOneReactionEndWithTheExactCount() async throws {
        let policy = AccountPolicy(loginLimitPerAddress: 100, registerLimitPerAddress: 100)
        let harness = try await APIHarness.make(policy: policy)
        try await harness.run { client in
            let creator = try await client.signUp()
            let others = try await client.signUp(count: 50)
            let room = try await client.multipartyRoom(by: creator, members: others.map { ($0, "writer") })
            let sent = try await client.send("vote", uid: "v-1", to: room.id, as: creator)
            let path = "/v1/rooms/\(room.id)/messages/\(sent.id)/reactions/:fire:"
            // Every user adds, removes and adds again; the odd ones remove once more.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in others.enumerated() {
                    group.addTask {
                        for method in [HTTPRequest.Method.put, .delete, .put] + (index % 2 == 1 ? [.delete] : []) {
                            let answer = try await client.json(method, path, token: token(user))
                            guard answer.status == .noContent else { throw HarnessError("\(answer.status)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let reactions = try await client.history(room.id, as: creator).messages.last?.reactions
            #expect(reactions == [ReactionSummary(key: ":fire:", count: 25, me: false)])
            // The events, in the outbox's (commit) order, count one by one to the same end.
            let counts = try await RecordedEvents.roomEvents(harness.database).filter {
                $0.contains(#""type":"reaction-changed""#)
            }.map { json in
                let event = try JSONCoding.decoder.decode(
                    Envelope<RoomEvent.ReactionChanged>.self, from: Data(json.utf8))
                return (count: event.data.count, added: event.data.added)
            }
            #expect(counts.count == 175)
            var expected: Int64 = 0
            for step in counts {
                expected += step.added ? 1 : -1
                #expect(step.count == expected)
            }
            #expect(counts.last?.count == 25)
        }
    }

    @Test func twoEditsRacingEndWithTheLastCommittedContentEverywhere() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let sent = try await client.send("v0", uid: "race", to: id, as: users[1])
            let path = "/v1/rooms/\(id)/messages/\(sent.id)"
            for round in 0..<5 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for side in ["a", "b"] {
                        group.addTask {
                            let answer = try await client.json(
                                .patch, path, token: token(users[1]), body: #"{"content":"\#(side)\#(round)"}"#)
                            guard answer.status == .ok else { throw HarnessError("\(answer.status)") }
                        }
                    }
                    try await group.waitForAll()
                }
                // The stored content is the one whose event the outbox holds last (commit order).
                let events = try await RecordedEvents.roomEvents(harness.database).filter {
                    $0.contains(#""type":"message-edited""#)
                }
                let last = try #require(events.last)
                let event = try JSONCoding.decoder.decode(
                    Envelope<RoomEvent.Edited>.self, from: Data(last.utf8))
                let stored = try await client.history(id, as: users[2]).messages.last
                #expect(stored?.content == event.data.message.content)
                #expect(stored?.content.hasSuffix("\(round)") == true)
                let changed = try await client.history(
                    id, "changedSince=2000-01-01T00:00:00Z", as: users[2]
                ).messages.first
                #expect(changed?.content == stored?.content)
            }
        }
    }

    @Test func repliesNameTheirTargetAndFormAThread() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let long = String(repeating: "ž", count: 150)
            let target = try await client.send(long, uid: "t-1", to: id, as: admin)
            var replies: [Message] = []
            for index in 0..<3 {
                replies.append(
                    try await client.decoded(
                        Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                        body: #"{"content":"re \#(index)","uid":"re-\#(index)","replyToId":\#(target.id)}"#))
            }
            _ = try await client.send("not a reply", uid: "n-1", to: id, as: writer)
            let preview = try #require(replies[0].replyTo)
            #expect(preview.id == target.id && preview.seq == target.seq && preview.sentById == userID(admin))
            #expect(preview.excerpt == String(repeating: "ž", count: 100) && !preview.deleted)

            let history = try await client.history(id, as: reader).messages
            #expect(history.first { $0.id == target.id }?.replyCount == 3)

            let thread = "/v1/rooms/\(id)/messages/\(target.id)/replies"
            let pages = try await client.pages(
                MessagesResponse.self, "\(thread)?limit=2", token: token(reader)
            ) { ($0.messages.map(\.content), $0.nextCursor) }
            #expect(pages == [["re 0", "re 1"], ["re 2"]])
            let afterFirst = try await client.decoded(
                MessagesResponse.self, .get, "\(thread)?after=\(replies[0].seq)", token: token(reader))
            #expect(afterFirst.messages.map(\.content) == ["re 1", "re 2"] && !afterFirst.hasMore)

            // A target of another room, or deleted, is refused naming the field.
            let (otherRoom, otherUsers) = try await client.roomOfThree()
            let elsewhere = try await client.send("x", uid: "x-1", to: otherRoom, as: otherUsers[1])
            let wrongRoom = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"re","uid":"bad-1","replyToId":\#(elsewhere.id)}"#)
            #expect(wrongRoom.status == .badRequest && wrongRoom.problem?.field == "replyToId")
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(target.id)", token: token(admin)).status
                    == .noContent)
            let toDeleted = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"re","uid":"bad-2","replyToId":\#(target.id)}"#)
            #expect(toDeleted.status == .badRequest && toDeleted.problem?.field == "replyToId")

            // Replies to a deleted message say so, without its text.
            let after = try await client.history(id, as: reader).messages.first { $0.id == replies[0].id }
            #expect(
                after?.replyTo
                    == ReplyPreview(id: target.id, seq: target.seq, sentById: userID(admin), excerpt: "", deleted: true)
            )
            #expect(
                try await client.json(
                    .get, "/v1/rooms/\(otherRoom)/messages/\(target.id)/replies", token: token(otherUsers[0])
                )
                .status == .notFound)
        }
    }

    @Test func mentionsNameReadersAndCountUntilRead() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let outsider = try await client.signUp()
            let refused = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"hi","uid":"m-0","mentions":[\#(userID(outsider))]}"#)
            #expect(refused.status == .badRequest && refused.problem?.field == "mentions")
            let tooMany = (1...51).map(String.init).joined(separator: ",")
            #expect(
                try await client.json(
                    .post, "/v1/rooms/\(id)/messages", token: token(writer),
                    body: #"{"content":"hi","uid":"m-00","mentions":[\#(tooMany)]}"#
                ).status == .badRequest)

            let mention = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body:
                    #"{"content":"@r look","uid":"m-1","mentions":[\#(userID(reader)),\#(userID(reader)),\#(userID(admin))]}"#
            )
            #expect(mention.mentions == [userID(reader), userID(admin)])
            let second = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"@r again","uid":"m-2","mentions":[\#(userID(reader))]}"#)

            func counts(_ user: LoginResponse) async throws -> (unread: Int64, mentions: Int64) {
                let room = try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(id)", token: token(user))
                return (room.unreadCount, room.unreadMentionCount)
            }
            #expect(try await counts(reader) == (3, 2))
            #expect(try await counts(admin) == (2, 1))
            #expect(try await counts(writer) == (0, 0))

            // A deleted unread message leaves both counts.
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(second.id)", token: token(writer)).status
                    == .noContent)
            #expect(try await counts(reader) == (2, 1))
            #expect(try await counts(admin) == (1, 1))
            // An edit may replace the mentions.
            _ = try await client.decoded(
                Message.self, .patch, "/v1/rooms/\(id)/messages/\(mention.id)", token: token(writer),
                body: #"{"content":"@a look","mentions":[\#(userID(admin))]}"#)
            #expect(try await counts(reader) == (2, 0))
            #expect(try await counts(admin) == (1, 1))
            // Reading past them clears them.
            #expect(
                try await client.json(
                    .post, "/v1/rooms/\(id)/read", token: token(admin), body: #"{"messageId":\#(mention.id)}"#
                ).status == .ok)
            #expect(try await counts(admin) == (0, 0))
        }
    }

    @Test func changedSinceListsEditsDeletionsAndReactionsInTheOrderTheyChanged() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let writer = users[1]
            var sent: [Message] = []
            for index in 0..<5 {
                sent.append(try await client.send("m\(index)", uid: "c-\(index)", to: id, as: writer))
            }
            let start = JSONCoding.timestamp(Date().addingTimeInterval(-0.001))
            try await Task.sleep(for: .milliseconds(5))
            let base = "/v1/rooms/\(id)/messages"
            _ = try await client.json(.patch, "\(base)/\(sent[3].id)", token: token(writer), body: #"{"content":"e"}"#)
            _ = try await client.json(.delete, "\(base)/\(sent[1].id)", token: token(writer))
            _ = try await client.json(.put, "\(base)/\(sent[4].id)/reactions/:ok:", token: token(writer))
            _ = try await client.json(.put, "\(base)/\(sent[3].id)/reactions/:ok:", token: token(writer))

            let pages = try await client.pages(
                MessagesResponse.self, "\(base)?changedSince=\(start)&limit=2",
                following: { "\(base)?changedSince=\(start)&limit=2&cursor=\($0)" }, token: token(users[2])
            ) { ($0.messages.map(\.id), $0.nextCursor) }
            // sent[3] changed twice: it is listed once, where it last changed.
            #expect(pages == [[sent[1].id, sent[4].id], [sent[3].id]])
            let now = JSONCoding.timestamp(Date().addingTimeInterval(60))
            #expect(try await client.history(id, "changedSince=\(now)", as: writer).messages.isEmpty)
            for bad in ["changedSince=yesterday", "changedSince=\(start)&before=3", "changedSince=\(start)&cursor=x"] {
                #expect(try await client.json(.get, "\(base)?\(bad)", token: token(writer)).status == .badRequest)
            }
            let outsider = try await client.signUp()
            #expect(
                try await client.json(.get, "\(base)?changedSince=\(start)", token: token(outsider)).status == .notFound
            )
        }
    }

    @Test func anotherRoomsMessageAndBadPathsAreClientErrors() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (otherRoom, otherUsers) = try await client.roomOfThree()
            let elsewhere = try await client.send("x", uid: "x-1", to: otherRoom, as: otherUsers[1])
            let wrong = "/v1/rooms/\(id)/messages/\(elsewhere.id)"
            for (method, path) in [
                (HTTPRequest.Method.delete, wrong), (.put, "\(wrong)/reactions/:ok:"),
                (.delete, "\(wrong)/reactions/:ok:"), (.get, "\(wrong)/reactions/:ok:"), (.get, "\(wrong)/replies"),
            ] {
                #expect(
                    try await client.json(method, path, token: token(users[0])).status == .notFound, "\(method) \(path)"
                )
            }
            let mine = try await client.send("y", uid: "y-1", to: id, as: users[1])
            for key in ["%ZZ", "%FF", "%F0%9F"] {
                let answer = try await client.json(
                    .put, "/v1/rooms/\(id)/messages/\(mine.id)/reactions/\(key)", token: token(users[1]))
                #expect(answer.status == .badRequest, "\(key)")
            }
            let base = "/v1/rooms/\(id)/messages?changedSince=2000-01-01T00:00:00Z"
            for cursor in ["9223372036854775807-1", "-5-1", "1-0", "1", "x-y"] {
                #expect(
                    try await client.json(.get, "\(base)&cursor=\(cursor)", token: token(users[1])).status
                        == .badRequest,
                    "\(cursor)")
            }
            #expect(
                try await client.json(
                    .get, "/v1/rooms/\(id)/messages/\(mine.id)/replies?after=-1", token: token(users[1])
                ).status == .badRequest)
        }
    }

    @Test func aRetryIsAnsweredAsStoredAfterItsReplyTargetWasDeleted() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let target = try await client.send("t", uid: "t-1", to: id, as: users[0])
            let body = #"{"content":"re","uid":"re-1","replyToId":\#(target.id),"mentions":[\#(userID(users[2]))]}"#
            let first = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(first.status == .created)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(target.id)", token: token(users[0])).status
                    == .noContent)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(users[2]))", token: token(users[0]))
                    .status == .noContent)
            let again = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(again.status == .ok)
            #expect(again.json["id"] as? Int == first.json["id"] as? Int)
            // A new message with the same references is refused.
            let fresh = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[1]),
                body: #"{"content":"re","uid":"re-2","replyToId":\#(target.id)}"#)
            #expect(fresh.status == .badRequest)
        }
    }

    @Test func aFormerMemberCanDoNothingWithTheRoomsMessages() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let (admin, writer) = (users[0], users[1])
            let sent = try await client.send("bye", uid: "f-1", to: id, as: writer)
            _ = try await client.json(.put, "/v1/rooms/\(id)/messages/\(sent.id)/reactions/:ok:", token: token(writer))
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/members/\(userID(writer))", token: token(admin)).status
                    == .noContent)
            let message = "/v1/rooms/\(id)/messages/\(sent.id)"
            for (method, path, body) in [
                (HTTPRequest.Method.patch, message, #"{"content":"x"}"#), (.delete, message, nil),
                (.put, "\(message)/reactions/:ok:", nil), (.delete, "\(message)/reactions/:ok:", nil),
                (.get, "\(message)/reactions/:ok:", nil), (.get, "\(message)/replies", nil),
            ] {
                let answer = try await client.json(method, path, token: token(writer), body: body)
                #expect(answer.status == .notFound, "\(method) \(path)")
            }
        }
    }
}
