import Foundation
import ParleyCore
import PostgresNIO
import Testing

@testable import ParleyAPI
@testable import ParleyPostgres

/// The search index off the send's path (migration 0020) on real PostgreSQL: a message is
/// found before the relay indexes it and after, by either way of reading the index, whether its
/// words are still in the index's pending list or merged into the tree (migration 0033), and an
/// edit, a deletion or an erasure reaches the index whichever came first.
struct MessageSearchIndexTests {
    /// Every way a search can read: the caller's rooms, and the newest ids with a window so
    /// small that the older messages come from the word index.
    static let shapes: [MessageSearchShape] = [.rooms, .newest(window: 1), .newest(window: 1_000_000)]

    /// What the relay does to a batch it has published: its outbox rows go.
    func publish(_ harness: APIHarness) async throws {
        try await harness.database.client.query("DELETE FROM messenger.outbox", logger: .quiet)
    }

    func indexed(_ harness: APIHarness) async throws -> [Int64: Bool] {
        var rows: [Int64: Bool] = [:]
        let found = try await harness.database.client.query(
            "SELECT message_id, words IS NOT NULL FROM messenger.message_search", logger: .quiet)
        for try await (id, words) in found.decode((Int64, Bool).self) { rows[id] = words }
        return rows
    }

    /// The contents `q` finds for `user` read as `shape`, newest first.
    func found(
        _ q: String, by user: LoginResponse, in repository: PostgresRoomRepository, _ shape: MessageSearchShape,
        before: Int64? = nil, limit: Int = 50
    ) async throws -> [String] {
        try await repository.searchMessages(
            terms: SearchQuery(q).terms, userID: userID(user), roomID: nil, before: before, limit: limit,
            shape: shape
        ).map(\.message.content)
    }

    @Test func everyRuleHoldsBeforeAndAfterTheRelayIndexesAMessage() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let texts = [
                "Tady je zpráva, je to příliš dlouhé", "Grüße aus München, Straße", "Привет, как дела сегодня",
                "今日は良い天気です", "the quick brown fox",
            ]
            for (index, text) in texts.enumerated() {
                _ = try await client.send(text, uid: "i-\(index)", to: room, as: users[1])
            }
            let repository = PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing)
            let stranger = try await client.signUp()
            for stage in ["unpublished", "published", "merged"] {
                if stage == "published" { try await publish(harness) }
                if stage == "merged" {
                    // What autovacuum, or an insert finding the pending list full, does; the
                    // published words were in the pending list until now.
                    let merged = try await harness.database.client.query(
                        "SELECT gin_clean_pending_list('messenger.message_search_words_idx')", logger: .quiet
                    ).all(Int64.self)
                    #expect(merged.first ?? 0 > 0, "pages merged: \(merged)")
                }
                let published = stage != "unpublished"
                let rows = try await indexed(harness)
                #expect(rows.count == (published ? texts.count + 1 : 0), "\(rows)")  // and the room's first
                for shape in Self.shapes {
                    let context = "\(shape), \(stage)"
                    #expect(
                        try await found("zpr prilis", by: users[2], in: repository, shape) == [texts[0]], "\(context)")
                    #expect(try await found("STRASSE", by: users[2], in: repository, shape) == [texts[1]], "\(context)")
                    #expect(
                        try await found("привет дел", by: users[2], in: repository, shape) == [texts[2]], "\(context)")
                    #expect(try await found("天気", by: users[2], in: repository, shape) == [texts[3]], "\(context)")
                    #expect(try await found("\"quick brown\"", by: users[2], in: repository, shape) == [texts[4]])
                    #expect(try await found("\"brown quick\"", by: users[2], in: repository, shape).isEmpty)
                    #expect(try await found("zpr", by: stranger, in: repository, shape).isEmpty, "\(context)")
                }
            }
        }
    }

    @Test func editsDeletionsAndErasureReachTheIndexWhicheverCameFirst() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let writer = users[1]
            let repository = PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing)
            func edit(_ message: Message, to content: String) async throws {
                let answer = try await client.json(
                    .patch, "/v1/rooms/\(room)/messages/\(message.id)", token: token(writer),
                    body: #"{"content":"\#(content)"}"#)
                #expect(answer.status == .ok)
            }
            // Edited and deleted before the relay published them: publishing keeps what they did.
            let early = try await client.send("early banana", uid: "e-1", to: room, as: writer)
            try await edit(early, to: "early mango")
            let gone = try await client.send("early kiwi", uid: "e-2", to: room, as: writer)
            _ = try await client.json(.delete, "/v1/rooms/\(room)/messages/\(gone.id)", token: token(writer))
            try await publish(harness)
            // Edited and deleted after.
            let late = try await client.send("late banana", uid: "l-1", to: room, as: writer)
            let lateGone = try await client.send("late kiwi", uid: "l-2", to: room, as: writer)
            try await publish(harness)
            try await edit(late, to: "late mango")
            _ = try await client.json(.delete, "/v1/rooms/\(room)/messages/\(lateGone.id)", token: token(writer))

            let rows = try await indexed(harness)
            #expect(rows[early.id] == true && rows[late.id] == true)
            #expect(rows[gone.id] == false && rows[lateGone.id] == false, "a deleted message keeps no words")
            for shape in Self.shapes {
                #expect(try await found("banana", by: users[2], in: repository, shape).isEmpty, "\(shape)")
                #expect(try await found("kiwi", by: users[2], in: repository, shape).isEmpty, "\(shape)")
                #expect(
                    try await found("mango", by: users[2], in: repository, shape) == ["late mango", "early mango"],
                    "\(shape)")
            }

            // An erased or purged message takes its row with it.
            try await harness.database.client.query(
                "DELETE FROM messenger.message WHERE id = \(late.id)", logger: .quiet)
            #expect(try await indexed(harness)[late.id] == nil)
            #expect(try await found("mango", by: users[2], in: repository, .rooms) == ["early mango"])
        }
    }

    @Test func pagesAcrossTheWindowAndTheWordIndexHaveNoDuplicatesOrGaps() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            var sent: [Message] = []
            for index in 0..<12 {
                sent.append(try await client.send("paging pear \(index)", uid: "p-\(index)", to: room, as: users[1]))
                if index == 8 { try await publish(harness) }  // the last three stay in the outbox
            }
            let repository = PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing)
            for shape in Self.shapes + [.newest(window: 4)] {
                var seen: [String] = []
                var before: Int64?
                for _ in 0..<10 {
                    let page = try await repository.searchMessages(
                        terms: ["pear"], userID: userID(users[2]), roomID: nil, before: before, limit: 5,
                        shape: shape)
                    seen += page.map(\.message.content)
                    guard page.count == 5, let last = page.last else { break }
                    before = last.message.id
                }
                #expect(seen == (0..<12).reversed().map { "paging pear \($0)" }, "\(shape)")
            }
        }
    }

    @Test func aDeletedRoomsFinalErasureRemovesRowsTheRelayLeftBehind() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            _ = try await client.send("doomed plum", uid: "d-1", to: room, as: users[1])
            try await publish(harness)
            let database = harness.database.client
            try await database.query(
                "UPDATE messenger.chat_room SET deleted_at = now() WHERE id = \(room)", logger: .quiet)
            try await database.query("DELETE FROM messenger.message WHERE chat_room_id = \(room)", logger: .quiet)
            // A row the relay wrote as the purge deleted its message: neither saw the other.
            try await database.query(
                """
                INSERT INTO messenger.message_search (message_id, chat_room_id, words)
                VALUES (\(Int64.max), \(room), messenger.search_words('doomed plum'))
                """, logger: .quiet)
            let erasure = PostgresErasureRepository(
                rooms: PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing))
            #expect(try await erasure.finishRoomErasure(roomID: Int64(room)))
            let left = try await database.query(
                "SELECT count(*) FROM messenger.message_search WHERE chat_room_id = \(room)", logger: .quiet
            ).single(Int64.self)
            #expect(left == 0)
        }
    }
}
