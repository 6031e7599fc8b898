import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Chat-in on a broker that vouches for nobody (the plugin with `stamp_sender false`, as
/// EMQX or mosquitto-go-auth calling only Parley's HTTP ACL): the sender is the topic's
/// `{userId}` level, which only that user may write; a stamped property is the client's own.
extension BrokerPluginTests {
    @Test func withoutAStampTheSenderIsTheTopicsUserWhomOnlyThatUserMayWrite() async throws {
        let broker = try await withBroker(
            relay: true, ingest: true, brokerOptions: "plugin_opt_stamp_sender false", senders: .topic
        ) { api, broker, _ in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "writer")], name: "Plain")
            let (writer, other) = (userID(users[1]), userID(users[2]))
            let listener = try await connected(try mqtt(broker, login: users[0]))
            try await listener.subscribe(Topic.room(uid))
            func message(_ uid: String) -> String {
                #"{"type":"new-message-notification","data":{"content":"c","uid":"\#(uid)","sentById":\#(other)},"hash":"\#(uid)"}"#
            }
            /// Publishes as `login`'s client with mosquitto_pub, which can set any user property.
            func publish(_ login: LoginResponse, topic: String, _ payload: String, stamp: Int64? = nil) async throws
                -> Int32
            {
                var arguments = [
                    "-V", "5", "-q", "1", "-h", "127.0.0.1", "-p", String(broker.port), "-u", login.mqtt.username,
                    "-P", login.mqtt.password, "-i", login.mqtt.clientId, "-t", topic, "-m", payload,
                ]
                if let stamp { arguments += ["-D", "publish", "user-property", "parley-user", String(stamp)] }
                return try await Subprocess.run("/usr/bin/mosquitto_pub", arguments, timeLimit: .seconds(20)).status
            }

            // Its own topic: stored as that user, whatever it stamped or wrote in the payload.
            #expect(try await publish(users[1], topic: "chat-in/\(uid)/\(writer)", message("own"), stamp: other) == 0)
            let event = try #require(
                await envelope(listener, "new-message-notification", of: Message.self) { $0.uid == "own" })
            #expect(event.data.sentById == writer)

            // Another user's topic, and the topic naming nobody: the ACL refuses the publish, so
            // nothing is stored (and the client learns it).
            let sender = try await connected(try mqtt(broker, login: users[1]))
            for topic in ["chat-in/\(uid)/\(other)", "chat-in/\(uid)"] {
                await #expect(throws: MQTTError.self, "\(topic)") {
                    try await sender.publish(topic: topic, string: message("refused"))
                }
            }
            await sender.shutdown()
            #expect(try await publish(users[1], topic: "chat-in/\(uid)/\(writer)", message("after")) == 0)
            _ = await envelope(listener, "new-message-notification", of: Message.self) { $0.uid == "after" }
            let stored = try await api.history(roomID, as: users[0]).messages
            #expect(stored.map(\.uid) == ["0", "own", "after"])
            #expect(stored.dropFirst().allSatisfy { $0.sentById == writer })
            await listener.shutdown()
        }
        #expect(await broker.stop() == 0)
    }
}
