import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Delivery receipts over REST: coalesced, forward only, capped, implied by reading, listed
/// for every member; heard on the room's topic and by webhooks.
struct ReceiptTests {
    struct Receipts: Decodable {
        let receipts: [Receipt]
        let nextCursor: String?
    }

    static func receipts(
        _ client: any TestClientProtocol, room: Int, as reader: LoginResponse, query: String = "",
        until done: ([Receipt]) -> Bool = { _ in true }
    ) async throws -> Receipts {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let page = try await client.decoded(
                Receipts.self, .get, "/v1/rooms/\(room)/receipts?\(query)", token: token(reader))
            if done(page.receipts) || ContinuousClock.now > deadline { return page }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func delivered(_ client: any TestClientProtocol, room: Int, seq: Int64, as member: LoginResponse)
        async throws -> JSONAnswer
    {
        try await client.json(
            .post, "/v1/rooms/\(room)/delivered", token: token(member), body: #"{"seq":\#(seq)}"#)
    }

    @Test func aReceiptIsCappedForwardOnlyImpliedByReadingAndListedForEveryMember() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            for index in 0..<3 { try await client.send("m\(index)", uid: "m\(index)", to: room, as: users[0]) }
            // Before anything: every member, 0 for none (the sender's own messages moved its marker).
            let none = try await Self.receipts(client, room: room, as: users[1])
            #expect(none.receipts.map(\.userId) == users.map(\.user.id).sorted())
            let others = none.receipts.filter { $0.userId != users[0].user.id }
            #expect(others.allSatisfy { $0.readSeq == 0 && $0.deliveredSeq == 0 && $0.updatedAt == nil })

            let answer = try await Self.delivered(client, room: room, seq: 99, as: users[1])
            #expect(answer.status == .noContent)
            let capped = try await Self.receipts(client, room: room, as: users[2]) { receipts in
                receipts.contains { $0.userId == users[1].user.id && $0.deliveredSeq > 0 }
            }
            let mine = try #require(capped.receipts.first { $0.userId == users[1].user.id })
            #expect(mine.deliveredSeq == 4 && mine.readSeq == 0 && mine.updatedAt != nil)
            // Lower later: nothing moves back.
            _ = try await Self.delivered(client, room: room, seq: 2, as: users[1])
            try await Task.sleep(for: .milliseconds(1_300))
            let kept = try await Self.receipts(client, room: room, as: users[1])
            #expect(kept.receipts.first { $0.userId == users[1].user.id }?.deliveredSeq == 4)
            // Reading implies receiving.
            _ = try await client.json(
                .post, "/v1/rooms/\(room)/read", token: token(users[2]), body: #"{"seq":3}"#)
            let read = try await Self.receipts(client, room: room, as: users[1])
            let reader = try #require(read.receipts.first { $0.userId == users[2].user.id })
            #expect(reader.readSeq == 3 && reader.deliveredSeq == 3)
            // Paged by user id.
            let first = try await Self.receipts(client, room: room, as: users[1], query: "limit=2")
            #expect(first.receipts.count == 2 && first.nextCursor != nil)

            // Refusals: a stranger finds no room; a seq below 0 or missing is invalid.
            let stranger = try await client.signUp()
            #expect(try await Self.delivered(client, room: room, seq: 1, as: stranger).status == .notFound)
            let list = try await client.json(.get, "/v1/rooms/\(room)/receipts", token: token(stranger))
            #expect(list.status == .notFound)
            let negative = try await Self.delivered(client, room: room, seq: -1, as: users[1])
            #expect(negative.status == .badRequest && negative.problem?.field == "seq")
            let missing = try await client.json(
                .post, "/v1/rooms/\(room)/delivered", token: token(users[1]), body: "{}")
            #expect(missing.status == .badRequest)
        }
    }

    /// History counts, per message, the other members who received and read it (a hidden reader's
    /// read counts as received only); a new message's event and REST answer start at none; a
    /// room above the member limit has none at all.
    @Test func historyAndNewMessagesCarryReceiptCountsInSmallRoomsOnly() async throws {
        var harness = try await APIHarness.make()
        harness.receiptsMaxMembers = 3
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let sent = try await client.send("second", uid: "s-2", to: room, as: users[0])
            #expect(sent.receipts == MessageReceipts.none)
            #expect(
                try await client.json(.post, "/v1/rooms/\(room)/read", token: token(users[1]), body: #"{"seq":2}"#)
                    .status == .ok)
            #expect(try await Self.delivered(client, room: room, seq: 1, as: users[2]).status == .noContent)
            let history = try await Self.receiptsOf(client, room: room, as: users[0]) { $0.first?.delivered == 2 }
            // Seq 1 (the creator's): the writer read it, the reader received it.
            #expect(
                history.map(\.receipts) == [
                    MessageReceipts(delivered: 2, read: 1), MessageReceipts(delivered: 1, read: 1),
                ])
            let answer = try await client.json(.get, "/v1/rooms/\(room)/messages", token: token(users[2]))
            #expect(answer.text.contains(#""receipts":{"#))

            // The writer stops sharing reads: their read counts as received only.
            _ = try await client.json(
                .patch, "/v1/me/privacy", token: token(users[1]), body: #"{"readReceipts":"nobody"}"#)
            let hidden = try await client.history(room, as: users[0]).messages.map(\.receipts)
            #expect(hidden == [MessageReceipts(delivered: 2, read: 0), MessageReceipts(delivered: 1, read: 0)])

            // A fourth member: above the limit, every message's receipts are null.
            let fourth = try await client.signUp()
            let added = try await client.json(
                .put, "/v1/rooms/\(room)/members/\(userID(fourth))", token: token(users[0]), body: #"{"role":"reader"}"#
            )
            #expect((200..<300).contains(added.status.code), "\(added.text)")
            #expect(try await client.history(room, as: users[0]).messages.allSatisfy { $0.receipts == nil })
            let large = try await client.send("third", uid: "s-3", to: room, as: users[0])
            #expect(large.receipts == nil)
            let text = try await client.json(.get, "/v1/rooms/\(room)/messages", token: token(users[0])).text
            #expect(text.contains(#""receipts":null"#))
        }
    }

    /// The receipts of a room's history, once `done` holds of them (the delivered mark is
    /// coalesced), within 5 s.
    static func receiptsOf(
        _ client: any TestClientProtocol, room: Int, as reader: LoginResponse,
        until done: ([MessageReceipts]) -> Bool
    ) async throws -> [Message] {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let messages = try await client.history(room, as: reader).messages
            if done(messages.compactMap(\.receipts)) || ContinuousClock.now > deadline { return messages }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// 200 members acknowledge at once, each several times out of order: every receipt ends at
    /// its member's highest, and none is ever seen to move back.
    @Test func concurrentAcknowledgementsStayMonotonic() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let users = try await client.signUp(count: 3)
            let room = try await client.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
            for index in 0..<20 { try await client.send("m\(index)", uid: "m\(index)", to: room.id, as: users[0]) }
            var members: [Int64] = []
            for _ in 0..<200 {
                let user = try await harness.database.client.query(
                    """
                    INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                    VALUES ('r-' || gen_random_uuid() || '@example.com', 'R', 'M', '!') RETURNING id
                    """, logger: .quiet
                ).single(Int64.self)
                try await harness.database.client.query(
                    """
                    INSERT INTO messenger.chat_room_to_user_account (chat_room_id, user_account_id, role_id)
                    SELECT \(Int64(room.id)), \(user), id FROM cloud.role WHERE code = 'reader' LIMIT 1
                    """, logger: .quiet)
                members.append(user)
            }
            let store = PostgresReceiptRepositoryProbe(harness: harness)
            let roomID = Int64(room.id)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for member in members {
                    group.addTask {
                        var seen: Int64 = 0
                        for seq in [Int64.random(in: 1...21), 21, Int64.random(in: 1...20)] {
                            try await store.record(member: member, room: roomID, seq: seq)
                            let now = try await store.delivered(member: member, room: roomID)
                            #expect(now >= seen, "member \(member) moved back from \(seen) to \(now)")
                            seen = max(seen, now)
                        }
                    }
                }
                try await group.waitForAll()
            }
            for member in members {
                #expect(try await store.delivered(member: member, room: Int64(room.id)) == 21)
            }
        }
    }
}

/// The receipts' store itself, written by many members at once (no coalescer between: each
/// process coalesces only its own).
struct PostgresReceiptRepositoryProbe: Sendable {
    let harness: APIHarness

    func record(member: Int64, room: Int64, seq: Int64) async throws {
        try await PostgresReceiptRepository(database: harness.database, logger: .quiet).recordDelivered([
            (RoomUser(roomID: room, userID: member), seq)
        ])
    }

    func delivered(member: Int64, room: Int64) async throws -> Int64 {
        try await harness.database.client.query(
            """
            SELECT coalesce(max(seq), 0) FROM messenger.delivery_marker
            WHERE chat_room_id = \(room) AND user_account_id = \(member)
            """, logger: .quiet
        ).single(Int64.self)
    }
}
