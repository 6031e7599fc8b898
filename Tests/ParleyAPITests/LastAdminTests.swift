import Foundation
import HTTPTypes
import ParleyCore
import Testing

@testable import ParleyAPI

/// A multiparty room keeps a direct admin: the last one can neither leave nor step down.
struct LastAdminTests {
    @Test func theLastAdminCannotLeaveOrStepDownButCanOnceAnotherIs() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer) = (users[0], users[1])
            let member = { (user: LoginResponse) in "/v1/rooms/\(room)/members/\(userID(user))" }

            let demote = try await client.json(.put, member(admin), token: token(admin), body: #"{"role":"writer"}"#)
            #expect(demote.status == .conflict && demote.problem?.code == "last-admin")
            let leave = try await client.json(.delete, member(admin), token: token(admin))
            #expect(leave.status == .conflict && leave.problem?.code == "last-admin")
            // Re-stating the role is no change.
            let same = try await client.json(.put, member(admin), token: token(admin), body: #"{"role":"admin"}"#)
            #expect(same.status == .ok)

            let promoted = try await client.json(.put, member(writer), token: token(admin), body: #"{"role":"admin"}"#)
            #expect(promoted.status == .ok)
            // Two admins: one may remove the other, and then the one left is the last.
            let removed = try await client.json(.delete, member(admin), token: token(writer))
            #expect(removed.status == .noContent)
            let alone = try await client.json(.delete, member(writer), token: token(writer))
            #expect(alone.status == .conflict && alone.problem?.code == "last-admin")
            let members = try await client.decoded(
                ListPage<MemberResponse>.self, .get, "/v1/rooms/\(room)/members", token: token(writer))
            #expect(members.items.map(\.role.rawValue).sorted() == ["admin", "reader"])
        }
    }

    @Test func anErasedLastAdminHandsTheRoomToItsLongestStandingMember() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            // The reader joined before a newcomer: the longest-standing after the admin.
            let newcomer = try await client.signUp()
            _ = try await client.json(
                .put, "/v1/rooms/\(room)/members/\(userID(newcomer))", token: token(admin), body: #"{"role":"writer"}"#)
            let deleted = try await client.json(
                .delete, "/v1/me", token: token(admin), body: #"{"currentPassword":"correct horse"}"#)
            #expect(deleted.status == .accepted)
            try await harness.runMaintenance()
            let members = try await client.decoded(
                ListPage<MemberResponse>.self, .get, "/v1/rooms/\(room)/members", token: token(writer))
            let roles = Dictionary(uniqueKeysWithValues: members.items.map { ($0.user.id, $0.role) })
            // roomOfThree adds the writer before the reader.
            #expect(roles[userID(writer)] == .admin, "\(roles)")
            #expect(roles[userID(reader)] == .reader && roles[userID(newcomer)] == .writer)
            #expect(roles[userID(admin)] == nil)
        }
    }
}
