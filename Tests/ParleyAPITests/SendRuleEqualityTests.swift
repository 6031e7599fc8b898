import HummingbirdTesting
import ParleyPostgres
import Testing

@testable import ParleyAPI
@testable import ParleyCore

/// The send rules are stated twice: in Swift, where the general path decides
/// (``RoomService/allowed(_:minimum:)`` and the refusals of ``RoomRepository/sendRefusals(_:)``),
/// and inside the fast path's one statement (its rank check, `archived_at` and `BlockRule`),
/// which stores the common case in one round trip. This holds the two equal: over every kind
/// of sender and room, the statement stores exactly the sends the general rules allow.
struct SendRuleEqualityTests {
    struct Case: CustomStringConvertible {
        let name: String
        let roomID: Int64
        let senderID: Int64
        var description: String { name }
    }

    /// A group room (admin, writer, reader; a stranger outside), the same archived, and a
    /// two-party room whose peer blocked its writer; blocks matter in two-party rooms only.
    func cases(_ client: any TestClientProtocol) async throws -> [Case] {
        let users = try await client.signUp(count: 5)
        let (admin, writer, reader, stranger, peer) = (users[0], users[1], users[2], users[3], users[4])
        let group = try await client.multipartyRoom(by: admin, members: [(writer, "writer"), (reader, "reader")])
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
            let cases = try await cases(client)
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
            func send(_ item: Case, _ uid: String) throws -> MessageSubmission {
                MessageSubmission(
                    roomID: item.roomID, senderID: item.senderID,
                    message: try NewMessage(content: "rule", uid: uid, fileId: nil))
            }
            // Each send alone, then all in one batch.
            for (index, item) in cases.enumerated() {
                let stored = try await messages.sendIfAllowed(batch: [try send(item, "alone")], minimum: .writer)
                #expect((stored[0] != nil) == allowed[index], "\(item) sending alone")
            }
            let batch = try cases.map { try send($0, "batched") }
            let stored = try await messages.sendIfAllowed(batch: batch, minimum: .writer)
            for (index, item) in cases.enumerated() {
                #expect((stored[index] != nil) == allowed[index], "\(item) sending in a batch")
            }
        }
    }
}
