import Foundation
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import ParleyAPI

#if canImport(Glibc)
    import Glibc
#endif

/// `parley worker --roles ingest` killed (`kill -9`) while it stores a `chat-in` message the
/// broker acknowledged to its sender: the restarted ingest stores it, exactly once.
struct IngestKillTests {
    @Test func aMessageTheKilledIngestWasStoringIsStoredAfterItsRestart() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let internalPort = try PluginBroker.freePort()
        let broker = try await PluginBroker.forParley(services, internalPort: internalPort)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_INTERNAL_PORT": String(internalPort),
                "PARLEY_INGEST_SESSION": "parley-ingest-kill-\(UUID().uuidString.prefix(8))",
                // Its relay's fan-out jobs stay out of the shared Redis database other tests consume.
                "PARLEY_REDIS_DATABASE": "10",
            ]) { $1 })
        let stack = try await LiveStack.start(parley, workerRoles: ["outbox"])
        let log = TestScratch.path("parley-ingest", suffix: ".log")
        let ingest = Atomic<Int32>(try parley.start("worker", "--roles", "ingest", log: log))
        let pool = PostgresPool(configuration: database, logger: .quiet)
        do {
            try await pool.withRunningClient { pool in
                try await pool.client.withConnection { holder in
                    try await exercise(stack, parley: parley, broker: broker, holder: holder, ingest: ingest, log: log)
                }
            }
        } catch {
            Issue.record("ingest log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            _ = await Subprocess.terminate(ingest.load(ordering: .relaxed))
            await stack.stop()
            _ = await broker.stop()
            throw error
        }
        #expect(await Subprocess.terminate(ingest.load(ordering: .relaxed)) == 0)
        await stack.stop()
        #expect(await broker.stop() == 0)
        try? FileManager.default.removeItem(atPath: log)
    }

    private func exercise(
        _ stack: LiveStack, parley: ParleyCommand, broker: PluginBroker, holder: PostgresConnection,
        ingest: borrowing Atomic<Int32>, log: String
    ) async throws {
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
        let killed = ingest.load(ordering: .relaxed)
        kill(killed, SIGKILL)
        _ = await Subprocess.exitStatus(of: killed)
        // Its connection is gone with it: its half-done transaction must not commit.
        _ = try await holder.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            logger: .quiet)
        _ = try await holder.query("ROLLBACK", logger: .quiet)
        #expect(try await stored("killed-1") == 0)

        ingest.store(try parley.start("worker", "--roles", "ingest", log: log), ordering: .relaxed)
        for _ in 0..<100 where try await stored("killed-1") == 0 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try await stored("killed-1") == 1, "the message acknowledged to its sender was lost with the ingest")
        await sender.shutdown()
    }
}
