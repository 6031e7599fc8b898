import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import PostgresNIO
import ServiceLifecycle
import Testing

@testable import ParleyAPI
@testable import parley

extension BrokerPluginTests {
    /// An ingest on the kept session `session`, connected after it routes chat-in (the
    /// session's queue comes at once), running in a service group of its own. What its handler
    /// publishes goes through `publisher`: the ingest's own client holds its writes.
    func startKeptIngest(
        _ broker: PluginBroker, _ harness: APIHarness, session: String, publisher: MQTTClient,
        batchLimit: Int = 256
    ) async throws -> (MQTTClient, ServiceGroup, Task<Void, any Error>) {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: Self.server.username, password: Self.server.password,
                clientID: session, acknowledgementTimeout: .seconds(5), sessionExpiry: .seconds(60),
                receiveMaximum: IngestConsumer.receiveMaximum),
            logger: .quiet)
        var parts = harness.workerParts()
        parts.ingest = WorkerGraph.Ingest(
            input: client, publisher: publisher, lanes: 2, batchLimit: batchLimit, commitInterval: .milliseconds(4),
            keepsSubscription: true, senders: .plugin, senderStampKey: PluginBroker.stampKey, progressEvery: nil,
            payloadLimit: 64 * 1024, abuseLimits: harness.abuseLimits, rateLimitNamespace: harness.namespace)
        // Built before the client connects: the consumer routes chat-in as it is made.
        let group = WorkerGraph(parts).serviceGroup()
        _ = try await connected(client)
        return (client, group, Task { try await group.run() })
    }

    /// The ingest stopped in the middle of a burst of chat-in loses nothing: it stops reading,
    /// stores and acknowledges what it took, and its kept session holds the rest for the
    /// restarted ingest, which stores each message once.
    @Test func anIngestStoppedInTheMiddleOfABurstLosesNothing() async throws {
        let broker = try await withBroker { api, broker, harness in
            let users = try await api.signUp(count: 2)
            let room = try await api.json(.put, "/v1/rooms/direct/\(userID(users[1]))", token: token(users[0]))
            let (roomID, uid) = (try #require(room.json["id"] as? Int), try #require(room.json["uid"] as? String))
            let sessionID = "parley-ingest-stop-\(UUID().uuidString.prefix(8))"
            let publisher = try await connected(try serverClient(broker))
            func startIngest() async throws -> (MQTTClient, ServiceGroup, Task<Void, any Error>) {
                try await startKeptIngest(broker, harness, session: sessionID, publisher: publisher, batchLimit: 16)
            }
            func stored() async throws -> (all: Int, distinct: Int) {
                let row = try await harness.database.client.query(
                    "SELECT count(*)::int, count(DISTINCT uid)::int FROM messenger.message WHERE chat_room_id = \(roomID)",
                    logger: .quiet
                ).single((Int, Int).self)
                return (row.0, row.1)
            }
            let writer = try await connected(try mqtt(broker, login: users[0]))
            var (client, group, running) = try await startIngest()
            try await Task.sleep(for: .milliseconds(500))
            // The burst runs until the stop has ended and 40 more after it, so the stop falls in
            // its middle however fast or slow the machine is; it says how many it sent.
            let stopEnded = Handed(false)
            let burst = Task {
                var sent = 0
                var afterStop = 0
                while afterStop < 40 && sent < 5_000 {
                    if stopEnded.value { afterStop += 1 }
                    try await writer.publish(
                        topic: "chat-in/\(uid)",
                        string:
                            #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"b","uid":"burst-\#(sent)"},"hash":"b\#(sent)"}"#
                    )
                    sent += 1
                    try await Task.sleep(for: .milliseconds(10))
                }
                return sent
            }
            for _ in 0..<200 where try await stored().all < 40 { try await Task.sleep(for: .milliseconds(10)) }
            let stopBegan = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            await client.shutdown()
            stopEnded.set(true)
            let atStop = try await stored().all
            let total = try await burst.value
            print("the ingest stopped in \(ContinuousClock.now - stopBegan) having stored \(atStop) of \(total)")
            #expect(atStop >= 40 && atStop < total, "stored \(atStop) of \(total) when the ingest stopped")

            (client, group, running) = try await startIngest()
            for _ in 0..<150 where try await stored().all < total { try await Task.sleep(for: .milliseconds(100)) }
            let after = try await stored()
            let absent = after.distinct == total ? [] : try await missing(of: total, in: roomID, harness)
            #expect(after.all == total && after.distinct == total, "stored \(after) of \(total), missing \(absent)")
            await group.triggerGracefulShutdown()
            try await running.value
            await client.shutdown()
            for client in [writer, publisher] { await client.shutdown() }
        }
        #expect(await broker.stop() == 0)
    }

    /// The burst's uids not stored in the room, for a failure to name.
    private func missing(of total: Int, in roomID: Int, _ harness: APIHarness) async throws -> [String] {
        let rows = try await harness.database.client.query(
            "SELECT uid FROM messenger.message WHERE chat_room_id = \(roomID)", logger: .quiet)
        var stored = Set<String>()
        for try await uid in rows.decode(String.self) { stored.insert(uid) }
        return (0..<total).map { "burst-\($0)" }.filter { !stored.contains($0) }
    }
}
