import Foundation
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// `PARLEY_POSTGRES_REPLICAS`: a user's reads come from a streaming replica, except for a
/// while after their own writes, and a replica that falls behind is skipped.
struct ReplicaReadsTests {
    @Test func readsUseTheReplicaButNeverMissOnesOwnWritesAndSkipALaggingReplica() async throws {
        // A private PostgreSQL: its replica copies it whole, and the suite's shared one holds
        // every test's database.
        let services = try await TestServices.makePrivate()
        let replicaPort = try await PluginBroker.freePort()
        var stack: LiveStack?
        do {
            try await services.startReplica(port: replicaPort)
            let primary = services.postgres()
            var replica = primary
            replica.port = replicaPort
            let parley = ParleyCommand(
                environment: ParleyCommand(database: primary, services: services).environment.merging([
                    "PARLEY_POSTGRES_REPLICAS": "127.0.0.1:\(replicaPort)", "PARLEY_POSTGRES_REPLICA_MAX_LAG": "3",
                    "PARLEY_POSTGRES_READ_YOUR_WRITES": "5",
                ]) { $1 })
            let migrated = try await parley.run("migrate", "up")
            #expect(migrated.status == 0, "\(migrated.standardError)")
            let live = try await LiveStack.start(parley, workerRoles: ["outbox"])
            stack = live
            try await exercise(live, replica: replica)
        } catch {
            if let stack { Issue.record("serve: \(stack.log("serve.log"))") }
            await stack?.stop()
            try? await services.shutdown()
            throw error
        }
        await stack?.stop()
        try await services.shutdown()
    }

    private func exercise(_ stack: LiveStack, replica: PostgresConfiguration) async throws {
        /// What `serve` last logged of the replica: in use (`current`) or `skipped`.
        func state() -> String? {
            let pattern = try? Regex("127\\.0\\.0\\.1:\(replica.port)=(current|skipped)")
            return pattern.flatMap { stack.log("serve.log").matches(of: $0).last?.output[1].substring.map(String.init) }
        }
        func waitFor(_ wanted: String) async throws {
            for _ in 0..<150 where state() != wanted { try await Task.sleep(for: .milliseconds(100)) }
            #expect(state() == wanted)
        }
        // The replica is in use once the monitor has seen it keep up.
        try await waitFor("current")
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let roomID = room.id
        // Bob wrote nothing (signing up is not a signed-in write); the room is on the replica
        // by the time he reads.
        func history(_ user: (id: Int, token: String, mqtt: LoginResponse.MQTT)) async throws -> [String] {
            let answer = try await stack.request("GET", "/v1/rooms/\(roomID)/messages?after=0", token: user.token)
            #expect(answer.status == 200, "\(answer.text)")
            return try answer.decoded(MessagesResponse.self).messages.map(\.uid)
        }
        for _ in 0..<50
        where (try? await stack.request("GET", "/v1/rooms", token: bob.token).decoded(RoomsResponse.self))?.rooms
            .isEmpty != false
        {
            try await Task.sleep(for: .milliseconds(100))
        }

        // The replica stops replaying: what Alice sends now is on the primary only.
        try await onReplica(replica, "SELECT pg_wal_replay_pause()")
        let sent = try await stack.request(
            "POST", "/v1/rooms/\(roomID)/messages", body: #"{"content":"hello","uid":"fresh"}"#, token: alice.token)
        #expect(sent.status == 201)
        // Alice just wrote: her reads go to the primary. Bob's go to the replica, still
        // within the lag bound: it has not replayed the message.
        #expect(try await history(alice) == ["fresh"])
        #expect(try await history(bob) == [], "Bob's read came from the primary, not the replica")

        // Past the bound (3 s) the lagging replica is skipped: Bob reads the primary.
        var seen: [String] = []
        for _ in 0..<80 where seen.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            seen = try await history(bob)
        }
        #expect(seen == ["fresh"])
        #expect(state() == "skipped")

        // Replaying again, it catches up and is used again.
        try await onReplica(replica, "SELECT pg_wal_replay_resume()")
        try await waitFor("current")
        #expect(try await history(bob) == ["fresh"])
    }

    private func onReplica(_ replica: PostgresConfiguration, _ sql: String) async throws {
        try await PostgresPool(configuration: replica, logger: .quiet).withRunningClient { pool in
            _ = try await pool.client.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).collect()
        }
    }
}
