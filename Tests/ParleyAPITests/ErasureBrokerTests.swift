import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Ending accounts and rooms at the broker: the clients of a deactivated or deleted account
/// are disconnected at once, and a deleted room's topic stops delivering at once.
extension BrokerPluginTests {
    /// Waits up to a second for `client` to be disconnected.
    func disconnected(_ client: MQTTClient) async throws -> Bool {
        for _ in 0..<50 where client.isConnected { try await Task.sleep(for: .milliseconds(20)) }
        return !client.isConnected
    }

    @Test func deactivatedAndDeletedAccountsLoseTheirClientsAtOnce() async throws {
        let broker = try await withBroker(relay: true) { api, broker, harness in
            let admin = try await AdminRoutesTests().signUpAdmin(api, harness)
            let (deactivated, deleted) = (try await api.signUp(), try await api.signUp())
            let first = try await connected(try mqtt(broker, login: deactivated))
            let second = try await connected(try mqtt(broker, login: deleted))

            #expect(
                try await api.json(.post, "/v1/admin/users/\(userID(deactivated))/deactivate", token: admin).status
                    == .noContent)
            #expect(try await disconnected(first))
            #expect(
                try await api.json(
                    .delete, "/v1/me", token: token(deleted), body: #"{"currentPassword":"correct horse"}"#
                ).status == .accepted)
            #expect(try await disconnected(second))
            // Their tokens are refused from now on.
            let again = try mqtt(broker, login: deleted)
            try again.start()
            await #expect(throws: MQTTError.timeout) { try await again.waitUntilConnected(timeout: .seconds(1)) }
            for client in [first, second, again] { await client.shutdown() }
        }
        await broker.stop()
    }

    @Test func aDeletedRoomsTopicStopsDeliveringAtOnce() async throws {
        let broker = try await withBroker(relay: true) { api, broker, harness in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
            let member = try await connected(try mqtt(broker, login: users[1]))
            try await member.subscribe(Topic.room(uid))
            try await member.subscribe(Topic.notifications(userID(users[1])))
            _ = try await api.send("before", uid: "b", to: roomID, as: users[0])
            #expect(await envelope(member, "new-message-notification", of: Message.self) { $0.uid == "b" } != nil)

            #expect(try await api.json(.delete, "/v1/rooms/\(roomID)", token: token(users[0])).status == .accepted)
            let deleted = await envelope(member, "chatroom-change-notification", of: RoomEvent.Change.self) {
                $0.change == "deleted" && $0.chatRoomId == Int64(roomID)
            }
            #expect(deleted != nil)
            // Subscribing again is refused: the broker's cached decision was dropped.
            try await Task.sleep(for: .milliseconds(500))
            await #expect(throws: MQTTError.self) { try await member.subscribe(Topic.room(uid)) }
            await member.shutdown()
            _ = harness
        }
        await broker.stop()
    }
}
