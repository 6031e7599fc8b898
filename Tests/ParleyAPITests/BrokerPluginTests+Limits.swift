import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// The plugin's own limits and state: revocations kept across restarts, bounded ACL
/// questions, presence rebuilt and rate-limited per connection, and no leak on any of
/// those paths.
extension BrokerPluginTests {
    /// A logout's revocation outlives a broker restart: the plugin keeps it in its file.
    @Test func revocationsSurviveABrokerRestart() async throws {
        let file = TestScratch.path("revocations")
        // The broker's user (mosquitto, when the tests run as root) writes it.
        FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o666])
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = try await withBroker(brokerOptions: "plugin_opt_revocations_file \(file)") { api, broker, _ in
            let users = try await api.signUp(count: 2)
            let leaving = try await connected(try mqtt(broker, login: users[0]))
            #expect(try await api.json(.post, "/v1/auth/logout", token: token(users[0])).status == .noContent)
            for _ in 0..<100 where leaving.isConnected { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!leaving.isConnected)
            await leaving.shutdown()
            #expect((try? String(contentsOfFile: file, encoding: .utf8))?.isEmpty == false)

            let restarted = try await broker.restarted()
            let refused = try mqtt(restarted, login: users[0])
            try refused.start()
            await #expect(throws: MQTTError.timeout) { try await refused.waitUntilConnected(timeout: .seconds(1)) }
            await refused.shutdown()
            let staying = try await connected(try mqtt(restarted, login: users[1]))
            await staying.shutdown()
            #expect(await restarted.stop() == 0)
        }
    }

    /// A logout reaches the plugin twice, at once and through the outbox's relay: the plugin
    /// keeps the revocation once, in its list and in its file.
    @Test func aRevocationToldTwiceIsKeptOnce() async throws {
        let file = TestScratch.path("revocations")
        FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o666])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let broker = try await withBroker(relay: true, brokerOptions: "plugin_opt_revocations_file \(file)") {
            api, _, harness in
            let user = try await api.signUp()
            #expect(try await api.json(.post, "/v1/auth/logout", token: token(user)).status == .noContent)
            // The relay has published the queued command once the outbox is empty.
            for _ in 0..<250 {
                let left = try await harness.database.client.query(
                    "SELECT count(*) FROM messenger.outbox", logger: .quiet
                ).first(Int.self)
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(300))
            let lines = (try String(contentsOfFile: file, encoding: .utf8)).split(separator: "\n")
            #expect(lines.count == 1, "\(lines)")
        }
        #expect(await broker.stop() == 0)
    }

    /// Each ACL question blocks the broker's thread: one client gets a few a second, not
    /// thousands at once.
    @Test func aClientsACLQuestionsAreBoundedPerSecond() async throws {
        let broker = try await withBroker(brokerOptions: "plugin_opt_lookups_per_second 5") { api, broker, harness in
            let user = try await api.signUp()
            let client = try await connected(try mqtt(broker, login: user))
            // Users whose presence anyone may follow: every one of these subscriptions is
            // allowed, and each distinct topic is a question of its own.
            let open = try await harness.database.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash, presence_audience)
                SELECT 'open-' || g || '@example.com', 'Open', 'User', 'x', 'everyone' FROM generate_series(1, 21) g
                RETURNING id
                """, logger: .quiet
            ).all(Int64.self)
            // All at once, and four seconds' worth: on a busy machine even questions sent
            // together may span the next second's budget (a fresh run once got all of 10).
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for id in open.dropLast() {
                    group.addTask { (try? await client.subscribe(Topic.presence(id))) != nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            let answered = outcomes.filter { $0 }.count
            let refused = outcomes.count - answered
            #expect(answered >= 5 && answered < 20 && refused > 0, "\(answered) answered, \(refused) refused")
            try await Task.sleep(for: .milliseconds(1100))
            try await client.subscribe(Topic.presence(try #require(open.last)))
            await client.shutdown()
        }
        #expect(await broker.stop() == 0)
    }

    /// An allowed subscription of a room answers its input too: with a budget of one question
    /// a second, a member who subscribes and writes within one second is not refused (and a
    /// member who did not subscribe is, until the next second).
    @Test func aRoomsSubscriptionAnswersItsInputWithoutAQuestion() async throws {
        let broker = try await withBroker(relay: true, ingest: true, brokerOptions: "plugin_opt_lookups_per_second 1") {
            api, broker, _ in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "writer")], name: "Budget")
            let member = try await connected(try mqtt(broker, login: users[1]))
            let input =
                #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"c","uid":"first"},"hash":"h"}"#
            // Both questions inside one second: the subscription spends the second's budget.
            try await Task.sleep(for: .nanoseconds(Self.nanosecondsToNextSecond() + 20_000_000))
            try await member.subscribe(Topic.room(uid))
            try await member.publish(topic: "chat-in/\(uid)", string: input)
            let stored = await envelope(member, "new-message-notification", of: Message.self) { $0.uid == "first" }
            #expect(stored?.data.sentById == userID(users[1]))

            // Without the subscription, the publish is a question of its own, beyond the budget.
            // (Checked only when both fell in one second, as they do unless the machine stalls.)
            let other = try await connected(try mqtt(broker, login: users[0]))
            try await Task.sleep(for: .nanoseconds(Self.nanosecondsToNextSecond() + 20_000_000))
            let second = Int(Date().timeIntervalSince1970)
            try await other.subscribe("user/\(userID(users[1]))/online")
            let refused =
                (try? await other.publish(
                    topic: "chat-in/\(uid)", string: input.replacingOccurrences(of: "first", with: "second"))) == nil
            if Int(Date().timeIntervalSince1970) == second { #expect(refused) }
            await member.shutdown()
            await other.shutdown()
        }
        #expect(await broker.stop() == 0)
    }

    /// Nanoseconds until the wall clock's next whole second (the plugin's budget counts seconds).
    static func nanosecondsToNextSecond() -> Int64 {
        let now = Date().timeIntervalSince1970
        return Int64((now.rounded(.down) + 1 - now) * 1_000_000_000)
    }

    /// A user's presence publish is only a claim: subscribers get the contract's shape, built by
    /// the plugin; a payload that is not a small JSON object with `online` is refused.
    @Test func presenceIsRestampedToTheContractsShape() async throws {
        let broker = try await withBroker { api, broker in
            let bad: [[UInt8]] = [
                Array("not json".utf8), [0x7B, 0xFF, 0xFE, 0x7D], Array(repeating: UInt8(ascii: " "), count: 60_000),
                Array(#"{"type":"online-user-message","data":{"online":"yes"}}"#.utf8),
                Array(#"{"data":{"online":true},"online":false}"#.utf8),
                Array(#"{"type":"new-message-notification","data":{"online":true}}"#.utf8),
            ]
            // One user each: a client may publish its presence once per 10 s.
            let users = try await api.signUp(count: bad.count + 1)
            let server = try await connected(try serverClient(broker))
            try await server.subscribe("user/+/online")
            var liars: [MQTTClient] = []
            for (user, payload) in zip(users, bad) {
                let liar = try await connected(try mqtt(broker, login: user))
                liars.append(liar)
                await #expect(throws: MQTTError.self, "\(payload.prefix(40))") {
                    try await liar.publish(topic: "user/\(userID(user))/online", payload: payload, qos: 1, retain: true)
                }
            }
            let honest = try await connected(try mqtt(broker, login: users[bad.count]))
            let topic = "user/\(userID(users[bad.count]))/online"
            try await honest.publish(
                topic: topic,
                string:
                    #"{"type":"online-user-message","data":{"lastActivity":"2000-01-01T00:00:00.000Z","online":true,"extra":"<script>"},"hash":"x"}"#
            )
            var delivered: MQTTMessage?
            var leaked: [String] = []
            for _ in 0..<10 where delivered == nil {
                if let message = await next(server, within: .seconds(1)) {
                    if message.topic == topic { delivered = message } else { leaked.append(message.topic) }
                }
            }
            #expect(leaked.isEmpty, "refused presence delivered")
            let payload = Data(try #require(delivered?.payload))
            let envelope = try JSONCoding.decoder.decode(Envelope<Presence>.self, from: payload)
            #expect(envelope.type == "online-user-message")
            // The data's keys as sent: the client's extra one is gone.
            struct Sent: Decodable { let data: WireKeys }
            #expect(try JSONDecoder().decode(Sent.self, from: payload).data.keys == ["lastActivity", "online"])
            #expect(envelope.data.online == true)
            #expect(envelope.data.lastActivity.hasPrefix("2000") == false)
            for client in liars + [server, honest] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// A client's presence is limited per connection, not per client id: a reconnecting
    /// client may say it is online at once, even when its new connection takes the old one's
    /// freed memory (which glibc hands out again for the next connection of the same size).
    @Test func aReconnectingClientMayPublishItsPresenceAtOnce() async throws {
        let broker = try await withBroker { api, broker in
            let user = try await api.signUp()
            let topic = "user/\(userID(user))/online"
            for attempt in 0..<30 {
                let client = try await connected(try mqtt(broker, login: user))
                try await client.publish(
                    topic: topic, string: #"{"type":"online-user-message","data":{"online":true}}"#)
                // A second claim on the same connection within 10 s is refused.
                if attempt == 0 {
                    await #expect(throws: MQTTError.self) {
                        try await client.publish(
                            topic: topic, string: #"{"type":"online-user-message","data":{"online":false}}"#)
                    }
                }
                await client.shutdown()
            }
        }
        #expect(await broker.stop() == 0)
    }

    /// Every path of the plugin under valgrind: logins, ACL questions answered and refused
    /// (within the per-client budget), chat-in stamped with its sender, presence rebuilt and
    /// refused, a logout's revocation written to its file, and disconnects.
    @Test func thePluginLeaksNoMemory() async throws {
        let file = TestScratch.path("revocations")
        FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o666])
        defer { try? FileManager.default.removeItem(atPath: file) }
        // Kept answers to read at the start (one of them not a line the plugin wrote) and to
        // write at the stop.
        let store = try brokerStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let grants = "\(store)grants"
        let later = Int(Date().timeIntervalSince1970) + 600
        try "\(later) 1 42\u{1}kept\u{1}1\u{1}chat-room/AAAAAAAAAAAAAAAAAAAAAA\nnot a grant\n".write(
            toFile: grants, atomically: true, encoding: .utf8)
        // No ingest here: chat-in is not held for one (plugin_opt_ingest_wait_seconds 0).
        let options = [
            "plugin_opt_revocations_file \(file)", "plugin_opt_ingest_wait_seconds 0",
            "plugin_opt_grants_file \(grants)",
        ].joined(separator: "\n")
        let subscribed = Handed("")
        let broker = try await withBroker(valgrind: true, brokerOptions: options) {
            api, broker, _ in
            let (a, b) = (try await api.signUp(), try await api.signUp())
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(b))", token: token(a))
            let uid = room.json["uid"] as? String ?? ""
            subscribed.set(Topic.room(uid))
            let roomID = room.json["id"] as? Int ?? 0
            for login in [a, b] {
                let client = try await connected(try mqtt(broker, login: login, patience: .seconds(30)))
                try await client.subscribe(Topic.room(uid))
                await #expect(throws: MQTTError.self) { try await client.subscribe("#") }
                try await client.publish(
                    topic: "chat-in/\(uid)",
                    string:
                        #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"hi","uid":"leak-1"},"hash":"l1"}"#
                )
                let presence = "user/\(userID(login))/online"
                try await client.publish(
                    topic: presence, string: #"{"type":"online-user-message","data":{"online":true}}"#)
                await #expect(throws: MQTTError.self) { try await client.publish(topic: presence, string: "not json") }
                await client.shutdown()
            }
            let leaving = try await connected(try mqtt(broker, login: a, patience: .seconds(30)))
            #expect(try await api.json(.post, "/v1/auth/logout", token: token(a)).status == .noContent)
            for _ in 0..<250 where leaving.isConnected { try await Task.sleep(for: .milliseconds(20)) }
            await leaving.shutdown()
        }
        await broker.stop()
        let kept = (try? String(contentsOfFile: grants, encoding: .utf8)) ?? ""
        #expect(kept.contains(subscribed.value) && kept.contains("chat-room/AAAAAAAAAAAAAAAAAAAAAA"), "\(kept)")
        let log = broker.log
        #expect(
            log.contains("definitely lost: 0 bytes") || log.contains("All heap blocks were freed"),
            "\(log.suffix(2000))")
        #expect(log.contains("indirectly lost: 0 bytes") || log.contains("All heap blocks were freed"))
        // The dynamic loader trips valgrind on its own (rpath handling); nothing may point at
        // the plugin: every one of its source files is looked for.
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CParleyMosquittoPlugin")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".c") }
        #expect(files.count >= 7)
        for file in files {
            #expect(!log.contains("(\(file):"), "valgrind reports \(file): \(log.suffix(3000))")
        }
    }
}
