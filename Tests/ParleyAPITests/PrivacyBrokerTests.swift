import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Privacy where it travels: presence at the broker by each setting (and a change while
/// subscribed), typing and read state on the room's topic.
extension BrokerPluginTests {
    /// Whether `watcher` hears `owner`'s presence within a few seconds.
    private func hearsPresence(_ watcher: MQTTClient, of owner: LoginResponse) async -> Bool {
        for _ in 0..<10 {
            guard let message = await next(watcher, within: .milliseconds(1500)) else { return false }
            if message.topic == Topic.presence(userID(owner)) { return true }
        }
        return false
    }

    private func setPrivacy(_ api: any TestClientProtocol, _ user: LoginResponse, _ body: String) async throws {
        let answer = try await api.json(.patch, "/v1/me/privacy", token: token(user), body: body)
        #expect(answer.status == .ok, "\(answer.text)")
    }

    /// A presence publish from a new session of `owner` (one per connection every 10 s), and its
    /// offline presence as it ends; what the watchers held before is dropped first.
    private func announce(
        _ broker: PluginBroker, _ api: any TestClientProtocol, _ owner: LoginResponse, watchers: [MQTTClient]
    ) async throws {
        for watcher in watchers {
            var held = 0
            while held < 50, await next(watcher, within: .milliseconds(200)) != nil { held += 1 }
        }
        let again = try await api.decoded(
            LoginResponse.self, .post, "/v1/auth/login",
            body: #"{"email":"\#(owner.user.email ?? "")","password":"correct horse"}"#)
        let client = try await connected(try mqtt(broker, login: again))
        try await client.publish(
            topic: Topic.presence(userID(owner)),
            string: #"{"type":"online-user-message","data":{"online":true},"hash":"p"}"#)
        await client.shutdown()
    }

    @Test func presenceFollowsItsUsersPrivacyAtTheBrokerIncludingAChangeWhileSubscribed() async throws {
        let broker = try await withBroker(relay: true) { api, broker in
            let (owner, mate, stranger) = (try await api.signUp(), try await api.signUp(), try await api.signUp())
            let (roomID, _) = try await api.multipartyRoom(
                by: owner, members: [(mate, "writer"), (try await api.signUp(), "reader")])
            let mateClient = try await connected(try mqtt(broker, login: mate))
            let strangerClient = try await connected(try mqtt(broker, login: stranger))
            let ownClient = try await connected(try mqtt(broker, login: owner))
            let watchers = [mateClient, strangerClient, ownClient]

            // The default, room-mates: a room-mate may follow it, a stranger may not; its user may.
            try await mateClient.subscribe(Topic.presence(userID(owner)))
            await #expect(throws: MQTTError.self) { try await strangerClient.subscribe(Topic.presence(userID(owner))) }
            try await ownClient.subscribe(Topic.presence(userID(owner)))

            // Everyone: the stranger may now (once the relay told the plugin to forget its refusal),
            // and hears it with the room-mate.
            try await setPrivacy(api, owner, #"{"presence":"everyone"}"#)
            try await Task.sleep(for: .seconds(1))
            try await strangerClient.subscribe(Topic.presence(userID(owner)))
            try await announce(broker, api, owner, watchers: watchers)
            #expect(await hearsPresence(mateClient, of: owner))
            #expect(await hearsPresence(strangerClient, of: owner))

            // Nobody, while both are subscribed: deliveries stop (the relay tells the plugin),
            // new subscriptions are refused; its user still hears their own.
            try await setPrivacy(api, owner, #"{"presence":"nobody"}"#)
            try await Task.sleep(for: .seconds(1))
            try await announce(broker, api, owner, watchers: watchers)
            #expect(await !hearsPresence(mateClient, of: owner))
            #expect(await !hearsPresence(strangerClient, of: owner))
            #expect(await hearsPresence(ownClient, of: owner))
            await #expect(throws: MQTTError.self) { try await mateClient.subscribe(Topic.presence(userID(owner))) }

            // Room-mates again: the room-mate follows it until they leave the room.
            try await setPrivacy(api, owner, #"{"presence":"room-mates"}"#)
            try await Task.sleep(for: .seconds(1))
            try await mateClient.subscribe(Topic.presence(userID(owner)))
            await #expect(throws: MQTTError.self) { try await strangerClient.subscribe(Topic.presence(userID(owner))) }
            try await announce(broker, api, owner, watchers: watchers)
            #expect(await hearsPresence(mateClient, of: owner))
            let removed = try await api.json(
                .delete, "/v1/rooms/\(roomID)/members/\(userID(mate))", token: token(owner))
            #expect(removed.status == .noContent, "\(removed.text)")
            try await Task.sleep(for: .seconds(1))
            try await announce(broker, api, owner, watchers: watchers)
            #expect(await !hearsPresence(mateClient, of: owner))
            for client in [mateClient, strangerClient, ownClient] { await client.shutdown() }
        }
        await broker.stop()
    }

    @Test func typingOffIsDroppedAndReadReceiptsNobodyHideTheReadersState() async throws {
        let broker = try await withBroker(relay: true, ingest: true) { api, broker in
            let (writer, listener) = (try await api.signUp(), try await api.signUp())
            let (roomID, uid) = try await api.multipartyRoom(
                by: writer, members: [(listener, "writer"), (try await api.signUp(), "reader")])
            let writerClient = try await connected(try mqtt(broker, login: writer))
            let listenerClient = try await connected(try mqtt(broker, login: listener))
            try await listenerClient.subscribe(Topic.room(uid))
            try await writerClient.subscribe(Topic.notifications(userID(writer)))
            func typing(_ hash: String) async throws {
                try await writerClient.publish(
                    topic: Topic.chatIn(uid),
                    string: #"{"type":"creating-message-info","data":{"creating":true},"hash":"\#(hash)"}"#)
            }

            try await setPrivacy(api, writer, #"{"typing":"off","readReceipts":"nobody"}"#)
            try await typing("t1")
            #expect(await envelope(listenerClient, "creating-message-info", of: RoomEvent.Typing.self) == nil)
            // Silently: the writer is told nothing.
            #expect(await rejection(writerClient) == nil)

            // The listener's message, read by the writer: the room hears no read, and the
            // receipts list the writer's read state as null to others, as it is to themselves.
            try await api.send("seen?", uid: "q-1", to: roomID, as: listener)
            let read = try await api.json(
                .post, "/v1/rooms/\(roomID)/read", token: token(writer), body: #"{"seq":2}"#)
            #expect(read.status == .ok || read.status == .noContent, "\(read.text)")
            // What they read they received: that much the room hears, without the read.
            let received = await envelope(listenerClient, "receipt-changed", of: RoomEvent.ReceiptChanged.self) {
                $0.userId == userID(writer)
            }
            #expect(
                received?.data
                    == .init(chatRoomId: Int64(roomID), userId: userID(writer), readSeq: nil, deliveredSeq: 2))
            #expect(
                await envelope(listenerClient, "read-message-notification", of: RoomEvent.Read.self) {
                    $0.userId == userID(writer)
                } == nil)
            let seen = try await ReceiptTests.receipts(api, room: roomID, as: listener)
            #expect(seen.receipts.first { $0.userId == userID(writer) }?.readSeq == nil)
            #expect(seen.receipts.first { $0.userId == userID(writer) }?.deliveredSeq == 2)
            let own = try await ReceiptTests.receipts(api, room: roomID, as: writer)
            #expect(own.receipts.first { $0.userId == userID(writer) }?.readSeq == 2)

            // Shared again: typing and reads reach the room.
            try await setPrivacy(api, writer, #"{"typing":"on","readReceipts":"everyone"}"#)
            try await typing("t2")
            #expect(await envelope(listenerClient, "creating-message-info", of: RoomEvent.Typing.self) != nil)
            try await api.send("again?", uid: "q-2", to: roomID, as: listener)
            _ = try await api.json(.post, "/v1/rooms/\(roomID)/read", token: token(writer), body: #"{"seq":3}"#)
            let shared = await envelope(listenerClient, "read-message-notification", of: RoomEvent.Read.self) {
                $0.userId == userID(writer)
            }
            #expect(shared?.data.seq == 3)
            for client in [writerClient, listenerClient] { await client.shutdown() }
        }
        await broker.stop()
    }
}
