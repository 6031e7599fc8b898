import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// With `PARLEY_INGEST_SENDER=plugin` the ingest believes a `parley-user` stamp only when the
/// plugin signed it: on a broker that does not stamp (the plugin with `stamp_sender false`,
/// standing in for a broker without Parley's plugin) a client's own stamp, signed or not,
/// stores nothing; through the real plugin the same user's chat-in is stored.
extension BrokerPluginTests {
    @Test func aStampThePluginDidNotSignStoresNothing() async throws {
        let broker = try await withBroker(
            relay: true, ingest: true, brokerOptions: "plugin_opt_stamp_sender false", senders: .plugin
        ) { api, broker, _ in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "S")
            let victim = userID(users[0])
            func publish(_ id: String, signature: String?) async throws -> Int32 {
                let payload =
                    #"{"type":"new-message-notification","data":{"content":"c","uid":"\#(id)"},"hash":"\#(id)"}"#
                var arguments = [
                    "-V", "5", "-q", "1", "-h", "127.0.0.1", "-p", String(broker.port), "-u", users[1].mqtt.username,
                    "-P", users[1].mqtt.password, "-i", users[1].mqtt.clientId, "-t", "chat-in/\(uid)", "-m", payload,
                    "-D", "publish", "user-property", SenderStamp.userProperty, String(victim),
                ]
                if let signature {
                    arguments += ["-D", "publish", "user-property", SenderStamp.signatureProperty, signature]
                }
                return try await Subprocess.run("/usr/bin/mosquitto_pub", arguments, timeLimit: .seconds(20)).status
            }
            #expect(try await publish("unsigned", signature: nil) == 0)
            #expect(try await publish("forged", signature: String(repeating: "ab", count: 32)) == 0)
            // Signed with another key than the ingest's.
            let otherKey = try SenderStampKey(bytes: Array(repeating: 5, count: 32))
            let payload = Array(
                #"{"type":"new-message-notification","data":{"content":"c","uid":"other-key"},"hash":"other-key"}"#.utf8
            )
            let wrong = SenderStamp.signature(
                user: String(victim), topic: "chat-in/\(uid)", payload: payload, key: otherKey)
            #expect(try await publish("other-key", signature: wrong) == 0)
            try await Task.sleep(for: .seconds(1))
            let stored = try await api.history(roomID, as: users[0]).messages.map(\.uid)
            #expect(stored == ["0"], "a stamp the plugin did not sign was believed: \(stored)")
        }
        #expect(await broker.stop() == 0)
    }
}
