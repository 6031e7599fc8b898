import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAPI

/// The plugin bounds what the ingest owes (plugin_opt_ingest_backlog): past it, chat-in is
/// refused unacknowledged instead of acknowledged into a queue the broker would drop.
extension BrokerPluginTests {
    @Test func chatInPastTheIngestsBacklogIsRefusedUntilTheIngestReportsProgress() async throws {
        let broker = try await withBroker(brokerOptions: "plugin_opt_ingest_backlog 3") { api, broker, _ in
            let users = try await api.signUp(count: 2)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let uid = try #require(room.json["uid"] as? String)
            // An ingest that takes chat-in and never reports what it settled.
            let ingest = try await connected(try serverClient(broker))
            try await ingest.subscribe("$share/parley-ingest/\(Topic.chatInPrefix)+")
            let inbox = MessageInbox.of(ingest)
            let writer = try await connected(try mqtt(broker, login: users[0]))
            func send(_ index: Int) async throws {
                try await writer.publish(topic: "chat-in/\(uid)", string: #"{"type":"x","n":\#(index)}"#)
            }
            for index in 0..<3 { try await send(index) }
            for _ in 0..<3 { #expect(await inbox.next(within: .seconds(3)) != nil) }

            let refused = Task { try await send(3) }
            #expect(await inbox.next(within: .milliseconds(1500)) == nil, "passed past the ingest's backlog")
            #expect(await (try? refused.value) == nil, "acknowledged past the ingest's backlog")

            // Progress from anyone but the server counts for nothing.
            let outsider = try await connected(try mqtt(broker, login: users[1]))
            let caughtUp = IngestProgress(settled: 3, idle: true).json()
            try? await outsider.publish(topic: IngestProgress.topic, string: caughtUp)
            #expect(await (try? send(4)) == nil, "a user's progress report counted")

            try await ingest.publish(topic: IngestProgress.topic, string: caughtUp)
            // The refused sender reconnects (with a back-off) and may send then.
            var delivered = false
            for _ in 0..<50 where !delivered {
                delivered = (try? await send(5)) != nil
                if !delivered { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(delivered, "chat-in was still refused after the ingest caught up")
            var passed: [String] = []
            while let message = await inbox.next(within: .seconds(1)) {
                passed.append(String(decoding: message.payload, as: UTF8.self))
            }
            #expect(passed.contains(#"{"type":"x","n":5}"#), "\(passed)")
            for client in [ingest, writer, outsider] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// MQTT 3.1.1 has no negative PUBACK: its sender's connection closes unacknowledged. An
    /// MQTT 5 sender gets 0x87 and keeps its connection (closing it made a reconnect storm).
    @Test func pastTheBacklogAn311SenderIsDisconnectedAndAn5SenderRefused() async throws {
        let broker = try await withBroker(brokerOptions: "plugin_opt_ingest_backlog 2") { api, broker, _ in
            let users = try await api.signUp(count: 2)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let topic = "chat-in/\(try #require(room.json["uid"] as? String))"
            let ingest = try await connected(try serverClient(broker))
            try await ingest.subscribe("$share/parley-ingest/\(Topic.chatInPrefix)+")
            let old = try await MQTT311Client(
                port: broker.port, clientID: users[1].mqtt.clientId, username: users[1].mqtt.username,
                password: users[1].mqtt.password)
            #expect(try await old.publish(topic: topic, payload: "{}") == .acknowledged)
            let writer = try await connected(try mqtt(broker, login: users[0]))
            try await writer.publish(topic: topic, string: "{}")

            #expect(try await old.publish(topic: topic, payload: "{}") == .closed)
            await #expect(throws: (any Error).self) { try await writer.publish(topic: topic, string: "{}") }
            try await Task.sleep(for: .milliseconds(300))
            #expect(writer.isConnected, "the MQTT 5 sender lost its connection")
            for client in [ingest, writer] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// The ingest's own reports keep chat-in flowing through a backlog far smaller than
    /// what is sent: without them the plugin would refuse everything past the fifth.
    @Test func theIngestsProgressReportsLetChatInThroughABoundedBacklog() async throws {
        let broker = try await withBroker(relay: true, ingest: true, brokerOptions: "plugin_opt_ingest_backlog 5") {
            api, broker, harness in
            let users = try await api.signUp(count: 2)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let (roomID, uid) = (try #require(room.json["id"] as? Int), try #require(room.json["uid"] as? String))
            let writer = try await connected(try mqtt(broker, login: users[0]))
            let total = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    group.addTask {
                        let input =
                            #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"a","uid":"adm-\#(index)"},"hash":"a\#(index)"}"#
                        // Refused while the ingest is behind: sent again with the same uid, as clients do.
                        for _ in 0..<50 {
                            if (try? await writer.publish(topic: "chat-in/\(uid)", string: input)) != nil { return }
                            try await Task.sleep(for: .milliseconds(200))
                        }
                    }
                }
                try await group.waitForAll()
            }
            var stored = 0
            for _ in 0..<100 {
                stored = try await harness.database.client.query(
                    "SELECT count(*)::int FROM messenger.message WHERE chat_room_id = \(roomID) AND uid LIKE 'adm-%'",
                    logger: .quiet
                ).single(Int.self)
                if stored == total { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(stored == total)
            await writer.shutdown()
        }
        #expect(await broker.stop() == 0)
    }
}
