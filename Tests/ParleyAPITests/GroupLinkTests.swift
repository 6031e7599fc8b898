import Foundation
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Groups and application roles are the directory's: only a system administrator links them,
/// and a member who came through a link that is not required may hide, mute and leave.
struct GroupLinkTests {
    @Test func onlyASystemAdministratorLinksAndGroupMembersMayLeaveUnlessRequired() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let roomAdmin = users[0]
            let systemAdmin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let member = try await client.signUp()
            let group = try await client.json(
                .post, "/v1/admin/groups", token: systemAdmin, body: #"{"name":"G-\#(UUID().uuidString.prefix(6))"}"#)
            let groupID = try #require(group.json["id"] as? Int)
            _ = try await client.json(.put, "/v1/admin/groups/\(groupID)/members/\(userID(member))", token: systemAdmin)

            // A room admin who is no system administrator: 403, whether or not the group exists.
            for id in [groupID, 987_654_321] {
                let linked = try await client.json(
                    .put, "/v1/rooms/\(room)/groups/\(id)", token: token(roomAdmin), body: #"{"role":"reader"}"#)
                #expect(linked.status == .forbidden, "\(id): \(linked.text)")
                let unlinked = try await client.json(.delete, "/v1/rooms/\(room)/groups/\(id)", token: token(roomAdmin))
                #expect(unlinked.status == .forbidden)
            }
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(member)).status == .notFound)

            // The room's admin, made a system administrator, links it (not required).
            let both = try await AdminRoutesTests().promote(roomAdmin, client, harness)
            let link = "/v1/rooms/\(room)/groups/\(groupID)"
            #expect(try await client.json(.put, link, token: both, body: #"{"role":"reader"}"#).status == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(member)).status == .ok)
            // The group's member hides and mutes the room, then leaves it.
            let hidden = try await client.json(
                .put, "/v1/rooms/\(room)/hidden", token: token(member), body: #"{"hidden":true}"#)
            #expect(hidden.status == .noContent)
            let muted = try await client.json(
                .put, "/v1/rooms/\(room)/notifications", token: token(member), body: #"{"muted":true}"#)
            #expect(muted.status == .ok, "\(muted.text)")
            let leave = "/v1/rooms/\(room)/members/\(userID(member))"
            #expect(try await client.json(.delete, leave, token: token(member)).status == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(member)).status == .notFound)
            // Back only by an invitation.
            let readd = try await client.json(.put, leave, token: both, body: #"{"role":"reader"}"#)
            #expect(readd.status == .accepted)

            // A required link holds its members: leaving is refused.
            let required = try await client.json(
                .put, link, token: both, body: #"{"role":"reader","required":true}"#)
            #expect(required.status == .noContent)
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(member)).status == .ok)
            let held = try await client.json(.delete, leave, token: token(member))
            #expect(held.status == .forbidden, "\(held.text)")
        }
    }
}
