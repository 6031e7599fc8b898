import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAPI

/// Bots: made by administrators, acting only as themselves through their key and MQTT,
/// hearing the commands addressed to them on a real receiver and answering in the room.
struct BotTests {
    /// `POST /v1/admin/bots`'s answer, as the app's backend reads it.
    struct CreatedBot: Decodable {
        let user: UserResponse
        let apiKey: IssuedAPIKey
        let webhookSecret: String?
        let mqtt: LoginResponse.MQTT
    }

    /// A command as the bot's webhook receives it.
    struct Command: Decodable {
        struct Data: Decodable {
            struct Room: Decodable {
                let id: Int
                let type: String
            }
            let command: String
            let args: String
            let message: Message
            let room: Room
        }
        let type: String
        let data: Data
    }

    static func create(
        _ client: any TestClientProtocol, admin: String, name: String, webhookUrl: String? = nil
    ) async throws -> CreatedBot {
        try await client.decoded(
            CreatedBot.self, .post, "/v1/admin/bots", token: admin,
            body: try jsonText(["name": name, "webhookUrl": webhookUrl]))
    }

    /// Three users in two rooms the first made; the bot a writer of the first only.
    static func rooms(with bot: CreatedBot, _ client: any TestClientProtocol) async throws -> (
        users: [LoginResponse], room: (id: Int, uid: String), elsewhere: (id: Int, uid: String)
    ) {
        let users = try await client.signUp(count: 3)
        let room = try await client.multipartyRoom(by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
        let elsewhere = try await client.multipartyRoom(
            by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
        let added = try await client.json(
            .put, "/v1/rooms/\(room.id)/members/\(bot.user.id)", token: token(users[0]), body: #"{"role":"writer"}"#)
        #expect(added.status == .ok, "\(added.text)")
        return (users, room, elsewhere)
    }

    static func name() -> String { "bot-\(UUID().uuidString.prefix(8).lowercased())" }

    @Test func aBotHearsItsCommandsInItsRoomsAndAnswersThere() async throws {
        let receiver = try await WebhookReceiver.start()
        receiver.answerBody.withLock { $0 = #"{"content":"pong","metadata":{"source":"bot"}}"# }
        let made = Mutex<CreatedBot?>(nil)
        let name = Self.name()
        try await WebhookDeliveryTests().withWebhooks { client, admin in
            made.withLock { $0 = nil }
            let bot = try await Self.create(client, admin: admin, name: name, webhookUrl: receiver.url)
            made.withLock { $0 = bot }
        } _: { client, admin, _ in
            let bot = try #require(made.withLock { $0 })
            #expect(bot.apiKey.key.botId == bot.user.id)
            #expect(Set(bot.apiKey.key.scopes) == [.messagesRead, .messagesWrite])
            #expect(bot.mqtt.username == String(bot.user.id) && !bot.mqtt.password.isEmpty)
            let secret = try #require(bot.webhookSecret)
            let (users, room, elsewhere) = try await Self.rooms(with: bot, client)

            // Heard where the bot is a member, in any case, followed by a space or the end.
            try await client.send("/\(name.uppercased()) what time is it", uid: "c1", to: room.id, as: users[1])
            try await client.send("/\(name)x nothing", uid: "c2", to: room.id, as: users[1])
            try await client.send("/\(name) not here", uid: "c3", to: elsewhere.id, as: users[1])
            let heard = await receiver.wait { !$0.isEmpty }
            #expect(heard.count == 1)
            let request = try #require(heard.first)
            #expect(WebhookDeliveryTests.verifies(request, secret: secret))
            let command = try decode(Command.self, from: request.body)
            #expect(command.type == "command" && command.data.command == "/\(name)")
            #expect(command.data.args == "what time is it" && command.data.room.id == room.id)
            #expect(command.data.message.sentById == userID(users[1]) && command.data.room.type == "multiparty")

            // Its answer is said in the room, as the bot.
            let answered = try await Self.waitForMessage(client, room: room.id, as: users[0]) {
                $0.sentById == bot.user.id
            }
            #expect(answered?.content == "pong" && answered?.metadata != nil)

            // An answer that is no message, or too late, says nothing and is a failed delivery.
            receiver.answerBody.withLock { $0 = "pong" }
            try await client.send("/\(name)", uid: "c4", to: room.id, as: users[1])
            let notJSON = try await Self.deliveries(client, admin: admin, bot: bot.user.id, status: "failed") {
                $0.count == 1
            }
            #expect(notJSON.first?.attempts.first?.statusCode == 200)
            receiver.answerBody.withLock { $0 = #"{"content":"late"}"# }
            receiver.delay.withLock { $0 = .seconds(6) }
            try await client.send("/\(name) slow", uid: "c5", to: room.id, as: users[1])
            let failed = try await Self.deliveries(client, admin: admin, bot: bot.user.id, status: "failed") {
                $0.count == 2
            }
            #expect(failed.count == 2, "\(failed)")
            #expect(failed.allSatisfy { $0.type == "command" && $0.attempts.count == 1 })
            #expect(failed.first?.attempts.first?.error == "timed out")
            let history = try await client.history(room.id, as: users[0])
            #expect(history.messages.filter { $0.sentById == bot.user.id }.map(\.content) == ["pong"])
        }
        await receiver.stop()
    }

    @Test func aBotsKeyActsOnlyAsTheBotInItsRooms() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let name = Self.name()
            let bot = try await Self.create(client, admin: admin, name: name)
            #expect(bot.webhookSecret == nil)
            let key = bot.apiKey.secret
            let (users, room, elsewhere) = try await Self.rooms(with: bot, client)
            let roomID = room.id

            // It says and reads as itself, in its rooms.
            let said = try await client.decoded(
                Message.self, .post, "/v1/server/rooms/\(roomID)/messages", token: key,
                body: #"{"content":"hello from the bot","uid":"b1"}"#)
            #expect(said.sentById == bot.user.id)
            let read = try await client.json(.get, "/v1/server/rooms/\(roomID)/messages", token: key)
            #expect(read.status == .ok && read.text.contains("hello from the bot"))
            for (method, path) in [
                (HTTPRequest.Method.post, "/v1/server/rooms/\(elsewhere.id)/messages"),
                (.get, "/v1/server/rooms/\(elsewhere.id)/messages"),
            ] {
                let refused = try await client.json(method, path, token: key, body: #"{"content":"x","uid":"b2"}"#)
                #expect(refused.status == .notFound, "\(path): \(refused.text)")
            }
            // Never as someone else, nor as the system, nor with the app server's other scopes.
            for sentBy in [#""system""#, #"{"externalId":"someone"}"#] {
                let refused = try await client.json(
                    .post, "/v1/server/rooms/\(roomID)/messages", token: key,
                    body: #"{"content":"x","uid":"b3","sentBy":\#(sentBy)}"#)
                #expect(refused.status == .forbidden, "\(refused.text)")
            }
            let newRoom = try await client.json(
                .post, "/v1/server/rooms", token: key, body: #"{"name":"R","members":[]}"#)
            #expect(newRoom.status == .forbidden)
            // It has no password to sign in with.
            let login = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"\#(name)@bots.invalid","password":"anything at all"}"#)
            #expect(login.status == .unauthorized)
            // Its key renews its MQTT credentials, for its one client id; another key has none.
            let renewed = try await client.decoded(
                LoginResponse.MQTT.self, .post, "/v1/server/mqtt-credentials", token: key)
            #expect(renewed.clientId == bot.mqtt.clientId && renewed.username == bot.mqtt.username)
            let server = try await client.decoded(
                IssuedAPIKey.self, .post, "/v1/admin/api-keys", token: admin,
                body: #"{"name":"backend","scopes":["messages:write"]}"#)
            let none = try await client.json(.post, "/v1/server/mqtt-credentials", token: server.secret)
            #expect(none.status == .forbidden)

            // Listed, a name taken once, malformed names refused; deleted, its key is dead and
            // its name free again.
            let listed = try await client.json(.get, "/v1/admin/bots?limit=200", token: admin)
            #expect(listed.status == .ok && listed.text.contains(#""name":"\#(name)""#))
            let again = try await client.json(.post, "/v1/admin/bots", token: admin, body: #"{"name":"\#(name)"}"#)
            #expect(again.status == .conflict)
            for bad in ["a", "Has-Capitals", "with space", String(repeating: "x", count: 33)] {
                let refused = try await client.json(
                    .post, "/v1/admin/bots", token: admin, body: try jsonText(["name": bad]))
                #expect(refused.status == .badRequest && refused.problem?.field == "name", "\(bad)")
            }
            let unsafe = try await client.json(
                .post, "/v1/admin/bots", token: admin,
                body: #"{"name":"\#(Self.name())","webhookUrl":"http://10.0.0.1/x"}"#)
            #expect(unsafe.status == .badRequest && unsafe.problem?.field == "url", "\(unsafe.text)")
            let user = try await client.json(.post, "/v1/admin/bots", token: token(users[1]), body: #"{"name":"mine"}"#)
            #expect(user.status == .forbidden)
            let deleted = try await client.json(.delete, "/v1/admin/bots/\(bot.user.id)", token: admin)
            #expect(deleted.status == .noContent)
            // Making and deleting a bot (which holds a key) are in the audit log.
            let audit = try await client.json(.get, "/v1/admin/audit", token: admin)
            #expect(audit.text.contains(#""action":"POST /v1/admin/bots""#), "\(audit.text)")
            #expect(audit.text.contains(#""action":"DELETE /v1/admin/bots/{id}""#), "\(audit.text)")
            let dead = try await client.json(.get, "/v1/server/rooms/\(roomID)/messages", token: key)
            #expect(dead.status == .unauthorized)
            #expect(try await Self.create(client, admin: admin, name: name).user.id != bot.user.id)
            let gone = try await client.json(.delete, "/v1/admin/bots/\(bot.user.id)", token: admin)
            #expect(gone.status == .notFound)
        }
    }

    @Test func overMQTTABotReadsAndWritesOnlyItsRooms() async throws {
        let plugin = BrokerPluginTests()
        let broker = try await plugin.withBroker { client, broker, harness in
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let bot = try await Self.create(client, admin: admin, name: Self.name())
            let (_, room, elsewhere) = try await Self.rooms(with: bot, client)
            let mqtt = try await plugin.connected(
                try MQTTClient(
                    configuration: MQTTConfiguration(
                        port: broker.port, username: bot.mqtt.username, password: bot.mqtt.password,
                        clientID: bot.mqtt.clientId, acknowledgementTimeout: .seconds(3)), logger: .quiet))
            try await mqtt.subscribe(Topic.room(room.uid))
            try await mqtt.subscribe(Topic.notifications(bot.user.id))
            await #expect(throws: MQTTError.self) { try await mqtt.subscribe(Topic.room(elsewhere.uid)) }
            await #expect(throws: MQTTError.self) {
                try await mqtt.publish(topic: Topic.chatIn(elsewhere.uid), string: #"{"content":"x","uid":"m1"}"#)
            }
            // Deleting the bot ends its connection.
            let deleted = try await client.json(.delete, "/v1/admin/bots/\(bot.user.id)", token: admin)
            #expect(deleted.status == .noContent)
            var connected = true
            for _ in 0..<50 where connected {
                try await Task.sleep(for: .milliseconds(100))
                connected = mqtt.isConnected
            }
            #expect(!connected)
            await mqtt.shutdown()
        }
        #expect(await broker.stop() == 0)
    }

    /// The deliveries of commands to a bot once `done` holds of them (within 10 s).
    static func deliveries(
        _ client: any TestClientProtocol, admin: String, bot: Int64, status: String,
        until done: ([WebhookDeliveryTests.Deliveries.Delivery]) -> Bool
    ) async throws -> [WebhookDeliveryTests.Deliveries.Delivery] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let page = try await client.decoded(
                WebhookDeliveryTests.Deliveries.self, .get, "/v1/admin/bots/\(bot)/deliveries?status=\(status)",
                token: admin)
            if done(page.deliveries) || ContinuousClock.now > deadline { return page.deliveries }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func waitForMessage(
        _ client: any TestClientProtocol, room: Int, as reader: LoginResponse, where wanted: (Message) -> Bool
    ) async throws -> Message? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let found = try await client.history(room, as: reader).messages.first(where: wanted) { return found }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
