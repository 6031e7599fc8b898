import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Synchronization
import Testing

/// `parley worker` killed in the middle of a large fan-out: another worker finishes it, and
/// every member gets the notice at least once.
struct WorkerRecoveryTests {
    @Test func aKilledWorkersFanoutIsFinishedByAnother() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        var parley = ParleyCommand(database: database, services: services)
        parley = ParleyCommand(
            environment: parley.environment.merging([
                "PARLEY_FANOUT_CHUNK_SIZE": "25", "PARLEY_FANOUT_CONSUMERS": "1", "PARLEY_JOBS_VISIBILITY_TIMEOUT": "1",
            ]) { $1 })
        let memberCount = 1500

        // A large room with one message, straight through the repository (no API needed).
        let pool = PostgresPool(configuration: database, logger: .quiet)
        let (messageID, members) = try await pool.withRunningClient { pool in
            let ids = try await pool.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                SELECT 'member' || n || '@example.com', 'M', 'N', 'x' FROM generate_series(1, \(memberCount)) AS n
                RETURNING id
                """, logger: .quiet
            ).all(Int64.self)
            let rooms = PostgresRoomRepository(database: pool, logger: .quiet, fileLinks: .testing)
            let roomID = try await rooms.createMultiparty(
                creatorID: ids[0], name: "Big", description: nil,
                members: Dictionary(uniqueKeysWithValues: ids.dropFirst().map { ($0, .reader) }),
                firstMessage: try NewMessage(content: "welcome", uid: "w", fileId: nil))
            let messages = PostgresMessageRepository(database: pool, logger: .quiet, fileLinks: .testing)
            let sent = try await messages.send(batch: [
                MessageSubmission(
                    roomID: roomID, senderID: ids[0],
                    message: try NewMessage(content: "to all", uid: "all", fileId: nil))
            ])
            let messageID = try sent[0].get().message.id
            // Only the message's fan-out is under test. The room's creation also queued notices
            // to its 1,499 members ("added", and the welcome message), all on the topics the
            // subscriber below takes: on a subscriber slowed by stress-ng they filled
            // mosquitto's queue for it (max_queued_messages 1000), and the broker dropped the
            // message's first chunk that came after them.
            try await pool.client.query(
                "DELETE FROM messenger.outbox WHERE message_id IS DISTINCT FROM \(messageID)", logger: .quiet)
            return (messageID, Set(ids))
        }

        let subscriber = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        try subscriber.start()
        try await subscriber.waitUntilConnected(timeout: .seconds(5))
        try await subscriber.subscribe("messenger-notifications/+")
        let delivered = Deliveries()
        let listening = Task {
            for await message in subscriber.messages {
                guard
                    let event = try? JSONCoding.decoder.decode(Envelope<Message>.self, from: Data(message.payload)),
                    event.type == "new-message-notification", event.data.id == messageID,
                    let user = Int64(message.topic.split(separator: "/").last ?? "")
                else { continue }
                delivered.add(user)
            }
        }

        let stack = try await LiveStack.start(parley, serve: false, workerRoles: ["outbox", "fanout"])
        try await stack.stopping {
            let first = try #require(stack.worker)
            for _ in 0..<300 where delivered.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
            await first.kill()
            let atKill = delivered.count
            #expect(atKill > 0, "the first worker delivered nothing: \(first.log)")
            #expect(atKill < memberCount, "the first worker finished before it was killed; the test proved nothing")

            let second = try await stack.startWorker("second-worker", roles: ["outbox", "fanout"])
            for _ in 0..<600 where delivered.count < memberCount { try await Task.sleep(for: .milliseconds(50)) }
            let status = await second.stop()
            #expect(status == 0)
            #expect(delivered.users == members)
        }
        listening.cancel()
        await subscriber.shutdown()
    }
}

/// Who has received the notice.
final class Deliveries: Sendable {
    private let state = Mutex<Set<Int64>>([])
    func add(_ user: Int64) { state.withLock { _ = $0.insert(user) } }
    var count: Int { state.withLock { $0.count } }
    var users: Set<Int64> { state.withLock { $0 } }
}
