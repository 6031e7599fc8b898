import Foundation
import ParleyCore
import Testing

/// The app's server in rooms, over the in-memory repository: its rooms have exactly the
/// members it names, its adds are memberships past a departure, and two-party rooms stay pairs.
struct ServerRoomRulesTests {
    let rooms = InMemoryRooms()
    var service: RoomService {
        RoomService(rooms: rooms, messages: rooms, addPolicy: .invite, limits: AbuseLimits(membersPerRequest: 3))
    }

    @Test func aServerRoomHasExactlyItsMembersAndNoCreator() async throws {
        let room = try await service.createRoom(
            asServerNamed: " Ops ", description: "", members: [(1, .admin), (2, .reader)])
        #expect(room.name == "Ops" && room.description == nil)
        #expect(try await rooms.role(roomID: room.id, userID: 1) == .admin)
        #expect(try await rooms.role(roomID: room.id, userID: 2) == .reader)
        #expect(try await rooms.roomType(id: room.id) == .multiparty)
    }

    @Test(arguments: [
        [(Int64(1), RoomRole.admin), (1, .reader)], [], [(1, .admin), (2, .reader), (3, .reader), (4, .reader)],
    ])
    func aServerRoomBeyondTheRulesIsRefused(_ members: [(Int64, RoomRole)]) async throws {
        let refused = await #expect(throws: ParleyError.self) {
            try await service.createRoom(
                asServerNamed: "R", description: nil, members: members.map { (userID: $0.0, role: $0.1) })
        }
        #expect(refused?.code == .invalidRequest && refused?.field == "members")
        #expect(await rooms.roomCount == 0)
    }

    @Test func theServersAddIsAMembershipEvenForOneWhoLeft() async throws {
        let room = try await service.createRoom(
            asServerNamed: "R", description: nil, members: [(1, .admin), (2, .writer)])
        #expect(try await service.removeMember(roomID: room.id, memberID: 2, by: 2) == ())
        #expect(try await rooms.hasLeft(roomID: room.id, userID: 2))
        let back = try await service.setMember(asServerIn: room.id, memberID: 2, role: .reader)
        #expect(back.added && back.member.role == .reader)
        #expect(try await !rooms.hasLeft(roomID: room.id, userID: 2))
        let changed = try await service.setMember(asServerIn: room.id, memberID: 2, role: .writer)
        #expect(!changed.added && changed.member.role == .writer)
        try await service.removeMember(asServerFrom: room.id, memberID: 2)
        let again = await #expect(throws: ParleyError.self) {
            try await service.removeMember(asServerFrom: room.id, memberID: 2)
        }
        #expect(again?.code == .notFound)
    }

    @Test func aTwoPartyRoomStaysAPairAndNoRoomIsNotFound() async throws {
        let pair = try await service.direct(userID: 1, peerID: 2).room.id
        let forbidden = await #expect(throws: ParleyError.self) {
            try await service.setMember(asServerIn: pair, memberID: 3, role: .reader)
        }
        #expect(forbidden?.code == .forbidden)
        let missing = await #expect(throws: ParleyError.self) {
            try await service.removeMember(asServerFrom: 999, memberID: 1)
        }
        #expect(missing?.code == .notFound)
    }
}
