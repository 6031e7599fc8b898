import Foundation
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Adding people respects their choices: blocks hold both ways, and someone who left comes
/// back only by accepting an invitation (`/v1/me/invitations`).
struct InvitationRoutesTests {
    @Test func aBlockKeepsEitherUserFromAddingOrMentioningTheOther() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let outsider = try await client.signUp()
            // The outsider blocks the admin: the admin cannot pull them into a room, new or old.
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(admin))", token: token(outsider)).status
                    == .noContent)
            let add = try await client.json(
                .put, "/v1/rooms/\(room)/members/\(userID(outsider))", token: token(admin), body: #"{"role":"writer"}"#)
            #expect(add.status == .forbidden && add.problem?.code == "blocked")
            let create = try await client.json(
                .post, "/v1/rooms", token: token(admin),
                body:
                    #"{"name":"New","members":[{"userId":\#(userID(outsider)),"role":"writer"},{"userId":\#(userID(writer)),"role":"writer"}]}"#
            )
            #expect(create.status == .forbidden && create.problem?.code == "blocked", "\(create.text)")
            // The blocker cannot add the one they blocked either.
            let outsiderRoom = try await client.multipartyRoom(
                by: outsider, members: [(writer, "writer"), (reader, "reader")], name: "O")
            let back = try await client.json(
                .put, "/v1/rooms/\(outsiderRoom.id)/members/\(userID(admin))", token: token(outsider),
                body: #"{"role":"writer"}"#)
            #expect(back.status == .forbidden && back.problem?.code == "blocked")

            // A mention across a block is refused, in a send and in an edit; without it, the
            // same message goes.
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(writer))", token: token(reader)).status
                    == .noContent)
            let mention = try await client.json(
                .post, "/v1/rooms/\(room)/messages", token: token(writer),
                body: #"{"content":"hey","uid":"m-1","mentions":[\#(userID(reader))]}"#)
            #expect(mention.status == .forbidden && mention.problem?.code == "blocked", "\(mention.text)")
            let plain = try await client.send("hey", uid: "m-2", to: room, as: writer)
            let edit = try await client.json(
                .patch, "/v1/rooms/\(room)/messages/\(plain.id)", token: token(writer),
                body: #"{"content":"hey you","mentions":[\#(userID(reader))]}"#)
            #expect(edit.status == .forbidden && edit.problem?.code == "blocked", "\(edit.text)")
        }
    }

    @Test func someoneWhoLeftComesBackOnlyByAcceptingAnInvitation() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, leaver) = (users[0], users[2])
            let member = "/v1/rooms/\(room)/members/\(userID(leaver))"
            #expect(try await client.json(.delete, member, token: token(leaver)).status == .noContent)

            let readd = try await client.json(.put, member, token: token(admin), body: #"{"role":"writer"}"#)
            #expect(readd.status == .accepted, "\(readd.text)")
            // Its `createdAt` a time, or the decoding fails.
            let invitation = try decode(InvitationResponse.self, from: readd.text).invitation
            let invitationID = invitation.id
            #expect(invitation.room.id == Int64(room) && invitation.room.name == "T")
            #expect(invitation.room.type == .multiparty)
            #expect(invitation.inviter.id == userID(admin) && invitation.inviter.firstName == "Test")
            // Nothing of the room until accepted; one pending invitation however often re-added.
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(leaver)).status == .notFound)
            let again = try await client.json(.put, member, token: token(admin), body: #"{"role":"writer"}"#)
            #expect(try decode(InvitationResponse.self, from: again.text).invitation.id == invitationID)
            let listed = try await client.json(.get, "/v1/me/invitations", token: token(leaver))
            #expect(try decode(ListPage<Invitation>.self, from: listed.text).items.map(\.id) == [invitationID])
            #expect(listed.json.keys.contains("nextCursor"))
            // The invitee's notification topic gets the invitation (through the outbox).
            let events = try await RecordedEvents.read(harness.database, roomID: Int64(room)).flatMap(\.delivery.fanout)
                .filter { $0.event.contains(#""type":"invitation""#) && $0.userIDs == [userID(leaver)] }
            #expect(events.count == 1)

            // Declined: gone; re-adding makes a new one, which the invitee accepts.
            let decline = "/v1/me/invitations/\(invitationID)/decline"
            #expect(try await client.json(.post, decline, token: token(leaver)).status == .noContent)
            #expect(try await client.json(.post, decline, token: token(leaver)).status == .notFound)
            let second = try await client.json(.put, member, token: token(admin), body: #"{"role":"writer"}"#)
            let secondID = try decode(InvitationResponse.self, from: second.text).invitation.id
            #expect(secondID != invitationID)
            // Only the invitee accepts.
            let accept = "/v1/me/invitations/\(secondID)/accept"
            #expect(try await client.json(.post, accept, token: token(admin)).status == .notFound)
            let accepted = try await client.json(.post, accept, token: token(leaver))
            #expect(accepted.status == .ok && accepted.json["id"] as? Int == room, "\(accepted.text)")
            #expect(accepted.json["myRole"] as? String == "writer")
            #expect(try await client.json(.get, "/v1/rooms/\(room)", token: token(leaver)).status == .ok)
            // A member again: a role change is a change, not an invitation.
            #expect(try await client.json(.put, member, token: token(admin), body: #"{"role":"reader"}"#).status == .ok)
        }
    }

    @Test func aBlockWithdrawsPendingInvitations() async throws {
        try await APIHarness.make().run { client in
            let (room, users) = try await client.roomOfThree()
            let (admin, leaver) = (users[0], users[2])
            let member = "/v1/rooms/\(room)/members/\(userID(leaver))"
            #expect(try await client.json(.delete, member, token: token(leaver)).status == .noContent)
            #expect(
                try await client.json(.put, member, token: token(admin), body: #"{"role":"writer"}"#).status
                    == .accepted)
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(admin))", token: token(leaver)).status == .noContent
            )
            let listed = try await client.json(.get, "/v1/me/invitations", token: token(leaver))
            #expect(try decode(ListPage<Invitation>.self, from: listed.text).items.isEmpty)
        }
    }
}
