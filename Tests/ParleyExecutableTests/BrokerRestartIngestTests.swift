import Foundation
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import ParleyAPI

/// A graceful broker restart (`deploy/local/services stop`, then `start`) under chat-in at
/// 10 messages/s loses nothing the broker acknowledged. mosquitto 2.0.11 keeps the ingest's
/// session but not its shared subscription: before Parley's plugin held chat-in until the
/// ingest subscribed again, what came in between was acknowledged to no subscriber (PUBACK
/// 0x10) and dropped.
struct BrokerRestartIngestTests {
    @Test func everyAcknowledgedChatInIsStoredAcrossAGracefulBrokerRestart() async throws {
        let services = try await TestServices.makePrivate()
        do {
            try await exercise(services)
        } catch {
            try? await services.shutdown()
            throw error
        }
        try await services.shutdown()
    }

    private func exercise(_ services: TestServices) async throws {
        try await services.usePlugin(try PluginBroker.pluginPath)
        let database = try await services.makeDatabase(migrated: true)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_INTERNAL_PORT": String(services.port("INTERNAL")),
                "PARLEY_MQTT_TOKEN_KEY": services.value("PARLEY_LOCAL_MQTT_TOKEN_KEY") ?? "",
                "PARLEY_MQTT_STAMP_KEY": services.value("PARLEY_LOCAL_MQTT_STAMP_KEY") ?? "",
                "PARLEY_INGEST_SESSION": "parley-ingest-restart-\(UUID().uuidString.prefix(8))",
            ]) { $1 })
        let stack = try await LiveStack.start(parley)
        do {
            try await exercise(services, stack: stack, database: database)
        } catch {
            Issue.record("worker log: \(stack.log("worker.log"))")
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    private func exercise(_ services: TestServices, stack: LiveStack, database: PostgresConfiguration) async throws {
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let (roomID, roomUID) = (Int(room.id), room.uid)
        let sender = try MQTTClient(
            configuration: MQTTConfiguration(
                port: services.port("MQTT"), username: alice.mqtt.username, password: alice.mqtt.password,
                clientID: alice.mqtt.clientId, acknowledgementTimeout: .seconds(10)),
            logger: .quiet)
        try sender.start()
        do {
            try await sender.waitUntilConnected(timeout: .seconds(5))
            try await exercise(services, sender: sender, roomID: roomID, roomUID: roomUID, database: database)
        } catch {
            await sender.shutdown()
            throw error
        }
        await sender.shutdown()
    }

    private func exercise(
        _ services: TestServices, sender: MQTTClient, roomID: Int, roomUID: String, database: PostgresConfiguration
    ) async throws {
        @Sendable func payload(_ uid: String) -> String {
            #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"c","uid":"\#(uid)"},"hash":"\#(uid)"}"#
        }
        let pool = PostgresPool(configuration: database, logger: .quiet)
        try await pool.withRunningClient { pool in
            func stored() async throws -> Set<String> {
                let rows = try await pool.client.query(
                    "SELECT uid FROM messenger.message WHERE chat_room_id = \(roomID)", logger: .quiet)
                var uids: Set<String> = []
                for try await uid in rows.decode(String.self) { uids.insert(uid) }
                return uids
            }
            // The ingest is subscribed once a first message is stored.
            for attempt in 0..<100 where try await !stored().contains("warm-up") {
                if attempt % 10 == 0 {
                    try? await sender.publish(topic: "chat-in/\(roomUID)", string: payload("warm-up"))
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await stored().contains("warm-up"), "the ingest stored nothing before the restart")

            let acknowledged = AcknowledgedUIDs()
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    var index = 0
                    while !Task.isCancelled {
                        let uid = "restart-\(index)"
                        index += 1
                        group.addTask {
                            do {
                                try await sender.publish(topic: "chat-in/\(roomUID)", string: payload(uid))
                                acknowledged.uids.withLock { $0.append(uid) }
                            } catch {}  // not acknowledged: the sender knows and may send again
                        }
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            try await Task.sleep(for: .seconds(1))
            try await services.stop("mosquitto")
            try await Task.sleep(for: .seconds(2))
            try await services.start("mosquitto")
            let restarted = acknowledged.uids.withLock { $0.count }
            try await Task.sleep(for: .seconds(6))
            load.cancel()
            await load.value

            let sent = acknowledged.uids.withLock { Set($0) }
            #expect(sent.count > restarted, "nothing was acknowledged after the broker came back")
            var missing = sent
            for _ in 0..<100 where !missing.isEmpty {
                missing.subtract(try await stored())
                if !missing.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(missing.isEmpty, "acknowledged by the broker but never stored: \(missing.sorted())")
        }
    }
}

/// The uids the broker acknowledged, appended from the publishing tasks.
private final class AcknowledgedUIDs: Sendable {
    let uids = Mutex<[String]>([])
}
