import HummingbirdTesting
import ParleyPostgres
import Testing

@testable import ParleyAPI
@testable import ParleyCore

/// The send rules are stated twice: in Swift, where the general path decides
/// (``RoomService/allowed(_:minimum:)`` and the refusals of ``RoomRepository/sendRefusals(_:)``),
/// and inside the fast path's one statement (its rank check, `archived_at` and `BlockRule`),
/// which stores the common case in one round trip. This holds the two equal: over every kind
/// of sender and room, the statement stores exactly the sends the general rules allow, except
/// those of a member through a group only, which it leaves to the general path (its check reads
/// direct memberships), and the service then stores.
struct SendRuleEqualityTests {
    struct Case: CustomStringConvertible {
        let name: String
        let roomID: Int64
        let senderID: Int64
        /// A writer through a group only: allowed, left to the general path.
        var throughGroup = false
        var description: String { name }
    }

    /// A group room (admin, writer, reader; a stranger outside; a writer through a user group
    /// only, and a reader who is a writer through it), the same archived, and a two-party room
    /// whose peer blocked its writer; blocks matter in two-party rooms only.
    func cases(_ client: any TestClientProtocol, _ database: PostgresPool) async throws -> [Case] {
        let users = try await client.signUp(count: 7)
        let (admin, writer, reader, stranger, peer) = (users[0], users[1], users[2], users[3], users[4])
        let (grouped, groupedReader) = (users[5], users[6])
        let group = try await client.multipartyRoom(
            by: admin, members: [(writer, "writer"), (reader, "reader"), (groupedReader, "reader")])
        try await database.client.query(
            """
            WITH g AS (INSERT INTO cloud.user_group (name) VALUES ('g-' || md5(random()::text)) RETURNING id),
            members AS (
                INSERT INTO cloud.user_account_to_user_group (user_group_id, user_account_id)
                SELECT g.id, u.id FROM g, unnest(\([userID(grouped), userID(groupedReader)])::bigint[]) AS u(id)
            )
            INSERT INTO messenger.chat_room_to_user_group (chat_room_id, user_group_id, role_id)
            SELECT \(Int64(group.id)), g.id, r.id FROM g, cloud.role r JOIN cloud.app a ON a.id = r.app_id
            WHERE a.code = 'messenger' AND r.code = 'writer'
            """, logger: .quiet)
        let archived = try await client.multipartyRoom(
            by: admin, members: [(writer, "writer"), (reader, "reader")], name: "A")
        #expect(
            try await client.json(.post, "/v1/rooms/\(archived.id)/archive", token: token(admin)).status == .noContent)
        let direct = try await client.decoded(
            RoomResponse.self, .put, "/v1/rooms/direct/\(userID(peer))", token: token(writer))
        for (blocker, blocked) in [(peer, writer), (reader, writer)] {
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(blocked))", token: token(blocker)).status
                    == .noContent)
        }
        let (groupID, archivedID) = (Int64(group.id), Int64(archived.id))
        return [
            Case(name: "an admin", roomID: groupID, senderID: userID(admin)),
            Case(name: "a writer blocked by a member of a group room", roomID: groupID, senderID: userID(writer)),
            Case(name: "a reader", roomID: groupID, senderID: userID(reader)),
            Case(
                name: "a reader and a writer through a group", roomID: groupID, senderID: userID(groupedReader),
                throughGroup: true),
            Case(name: "a writer through a group only", roomID: groupID, senderID: userID(grouped), throughGroup: true),
            Case(name: "a stranger", roomID: groupID, senderID: userID(stranger)),
            Case(name: "the admin of an archived room", roomID: archivedID, senderID: userID(admin)),
            Case(name: "a writer of an archived room", roomID: archivedID, senderID: userID(writer)),
            Case(name: "a two-party room's blocked user", roomID: direct.id, senderID: userID(writer)),
            Case(name: "a two-party room's blocker", roomID: direct.id, senderID: userID(peer)),
            Case(name: "no room", roomID: 987_654_321, senderID: userID(writer)),
        ]
    }

    @Test func theOneStatementStoresExactlyTheSendsTheGeneralRulesAllow() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let cases = try await cases(client, harness.database)
            let repository = PostgresRoomRepository(
                database: harness.database, logger: .quiet, fileLinks: APIHarness.fileLinks)
            let members = Set(cases.map { RoomUser(roomID: $0.roomID, userID: $0.senderID) })
            let roles = try await repository.roles(of: members)
            let refusals = try await repository.sendRefusals(members)
            let messages = PostgresMessageRepository(
                database: harness.database, logger: .quiet, fileLinks: APIHarness.fileLinks)
            let allowed = cases.map { item in
                let member = RoomUser(roomID: item.roomID, userID: item.senderID)
                return (try? RoomService.allowed(roles[member], minimum: .writer)) != nil && refusals[member] == nil
            }
            // Both kinds of answer occur, so neither side can pass by deciding alike for all.
            #expect(Set(allowed) == [true, false])
            #expect(zip(cases, allowed).filter { $0.0.throughGroup }.allSatisfy { $0.1 })
            func stores(_ index: Int) -> Bool { allowed[index] && !cases[index].throughGroup }
            func send(_ item: Case, _ uid: String) throws -> MessageSubmission {
                MessageSubmission(
                    roomID: item.roomID, senderID: item.senderID,
                    message: try NewMessage(content: "rule", uid: uid, fileId: nil))
            }
            // Each send alone, then all in one batch.
            for (index, item) in cases.enumerated() {
                let stored = try await messages.sendIfAllowed(batch: [try send(item, "alone")], minimum: .writer)
                #expect((stored[0] != nil) == stores(index), "\(item) sending alone")
            }
            let batch = try cases.map { try send($0, "batched") }
            let stored = try await messages.sendIfAllowed(batch: batch, minimum: .writer)
            for (index, item) in cases.enumerated() {
                #expect((stored[index] != nil) == stores(index), "\(item) sending in a batch")
            }
            // What the statement left, the service's general path answers by the same rules.
            let outcomes = try await RoomService.send(
                try cases.map { try send($0, "served") }, rooms: repository, messages: messages)
            for (index, item) in cases.enumerated() {
                #expect(((try? outcomes[index].get()) != nil) == allowed[index], "\(item) sending through the service")
            }
        }
    }
}
