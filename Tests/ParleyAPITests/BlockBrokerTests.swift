import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Blocks at the broker: a blocked user's chat-in to the direct room is refused with
/// `blocked`, and the blocker's presence no longer reaches them.
extension BrokerPluginTests {
    @Test func aBlockedUserGetsNoPresenceAndTheirChatInIsRejected() async throws {
        let broker = try await withBroker(relay: true, ingest: true) { api, broker in
            let (blocker, blocked) = (try await api.signUp(), try await api.signUp())
            let room = try await api.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(blocker))", token: token(blocked))
            let watcher = try await connected(try mqtt(broker, login: blocked))
            let owner = try await connected(try mqtt(broker, login: blocker))
            try await watcher.subscribe(Topic.notifications(userID(blocked)))
            try await watcher.subscribe(Topic.presence(userID(blocker)))
            func presence() async -> Bool {
                for _ in 0..<10 {
                    guard let message = await next(watcher, within: .milliseconds(1500)) else { return false }
                    if message.topic == Topic.presence(userID(blocker)) { return true }
                }
                return false
            }
            try await owner.publish(
                topic: Topic.presence(userID(blocker)),
                string: #"{"type":"online-user-message","data":{"online":true},"hash":"p1"}"#)
            #expect(await presence())

            #expect(
                try await api.json(.put, "/v1/me/blocks/\(userID(blocked))", token: token(blocker)).status
                    == .noContent)
            // The relay tells the plugin within its wake-up; give it a moment. The blocker going
            // offline (the plugin publishes it) no longer reaches the blocked user.
            try await Task.sleep(for: .seconds(1))
            await owner.shutdown()
            #expect(await !presence())
            // Subscribing again is refused.
            await #expect(throws: MQTTError.self) { try await watcher.subscribe(Topic.presence(userID(blocker))) }

            try await watcher.publish(
                topic: Topic.chatIn(room.uid),
                string: #"{"type":"new-message-notification","data":{"content":"hi","uid":"x-1"},"hash":"x1"}"#)
            let rejected = try #require(await rejection(watcher))
            #expect(rejected.code == .blocked && rejected.uid == "x-1")

            // An archived room refuses chat-in too (a third user's room: the blocker may not pull
            // the blocked user into one).
            let third = try await api.signUp()
            let (groupID, groupUID) = try await api.multipartyRoom(
                by: third, members: [(blocked, "writer"), (blocker, "writer")], name: "Archive")
            #expect(
                try await api.json(.post, "/v1/rooms/\(groupID)/archive", token: token(third)).status == .noContent)
            try await watcher.publish(
                topic: Topic.chatIn(groupUID),
                string: #"{"type":"new-message-notification","data":{"content":"hi","uid":"x-2"},"hash":"x2"}"#)
            let archived = try #require(await rejection(watcher))
            #expect(archived.code == .roomArchived && archived.uid == "x-2")
            await watcher.shutdown()
        }
        await broker.stop()
    }
}
