import Foundation
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// `parley worker --roles ingest` killed (`kill -9`) while it stores a `chat-in` message the
/// broker acknowledged to its sender: the restarted ingest stores it, exactly once.
struct IngestKillTests {
    @Test func aMessageTheKilledIngestWasStoringIsStoredAfterItsRestart() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let internalPort = try await PluginBroker.freePort()
        let broker = try await PluginBroker.forParley(services, internalPort: internalPort)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_INTERNAL_PORT": String(internalPort),
                "PARLEY_INGEST_SESSION": "parley-ingest-kill-\(UUID().uuidString.prefix(8))",
                // Its relay's fan-out jobs stay out of the shared Redis database other tests consume.
                "PARLEY_REDIS_DATABASE": "10",
            ]) { $1 })
        let stack = try await LiveStack.start(parley, workerRoles: ["outbox"])
        let pool = PostgresPool(configuration: database, logger: .quiet)
        do {
            let ingest = try await stack.startWorker("ingest", roles: ["ingest"])
            let restarted = try await pool.withRunningClient { pool in
                try await pool.client.withConnection { holder in
                    try await exercise(stack, broker: broker, holder: holder, ingest: ingest)
                }
            }
            #expect(await restarted.stop() == 0)
        } catch {
            Issue.record("ingest log: \(stack.log("ingest.log"))\(stack.log("restarted-ingest.log"))")
            await stack.stop()
            _ = await broker.stop()
            throw error
        }
        await stack.stop()
        #expect(await broker.stop() == 0)
    }

    /// Kills `ingest` in the middle of a message and returns the ingest started after it.
    private func exercise(
        _ stack: LiveStack, broker: PluginBroker, holder: PostgresConnection, ingest: ParleyProcess
    ) async throws -> ParleyProcess {
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let (roomID, uid) = (Int(room.id), room.uid)
        let sender = try await broker.connectedClient(alice.mqtt)
        func send(_ id: String) async throws {
            try await sender.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"chatRoomId":\#(roomID),"content":"c","uid":"\#(id)"},"hash":"\#(id)"}"#
            )
        }
        func stored(_ id: String) async throws -> Int {
            try await holder.query("SELECT count(*)::int FROM messenger.message WHERE uid = \(id)", logger: .quiet)
                .collect().first?.decode(Int.self) ?? 0
        }
        // The ingest is subscribed and storing once a first message is stored.
        for attempt in 0..<50 where try await stored("warm-up") == 0 {
            if attempt % 10 == 0 { try await send("warm-up") }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await stored("warm-up") == 1)

        // Inserts into the message table wait for this transaction: the ingest's batch hangs.
        _ = try await holder.query("BEGIN", logger: .quiet)
        _ = try await holder.query("LOCK TABLE messenger.message IN SHARE MODE", logger: .quiet)
        try await send("killed-1")
        var waiting = 0
        for _ in 0..<100 where waiting == 0 {
            try await Task.sleep(for: .milliseconds(50))
            waiting =
                try await holder.query(
                    "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
                    logger: .quiet
                ).collect().first?.decode(Int.self) ?? 0
        }
        #expect(waiting > 0, "the ingest never reached the insert")
        await ingest.kill()
        // Its connection is gone with it: its half-done transaction must not commit.
        _ = try await holder.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            logger: .quiet)
        _ = try await holder.query("ROLLBACK", logger: .quiet)
        #expect(try await stored("killed-1") == 0)

        let restarted = try await stack.startWorker("restarted-ingest", roles: ["ingest"])
        for _ in 0..<100 where try await stored("killed-1") == 0 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try await stored("killed-1") == 1, "the message acknowledged to its sender was lost with the ingest")
        await sender.shutdown()
        return restarted
    }
}
