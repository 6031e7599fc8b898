import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// Several relays on one database: one publishes at a time, each event once and in order,
/// and a standby takes over when the active one stops or lets go after failing.
struct OutboxRelayTests {
    @Test func oneOfTwoRelaysPublishesEachEventOnceInOrderAndTheOtherTakesOver() async throws {
        let fixture = try await RelayFixture.make()
        try await fixture.harness.run { client in
            let room = try await client.roomOfThree().id
            // A pool of its own per relay, as in worker processes of their own: a lock left on a
            // pooled connection must not pass for the next relay's.
            @Sendable func relay() -> ServiceGroup {
                let database = PostgresPool(configuration: fixture.harness.database.configuration, logger: .quiet)
                return fixture.relay(database: database, publisher: fixture.client, alsoRunning: [database])
            }
            var received: [String] = []
            let first = relay()
            let firstRunning = Task { try await first.run() }
            try await fixture.addEvents(0...49, room: room)
            received += await fixture.receive(50)
            let second = relay()
            let secondRunning = Task { try await second.run() }
            try await fixture.addEvents(50...99, room: room)
            received += await fixture.receive(50)
            // The active relay stops: the standby tries for the lock within a second.
            await first.triggerGracefulShutdown()
            try await firstRunning.value
            try await fixture.addEvents(100...149, room: room)
            received += await fixture.receive(50)
            await second.triggerGracefulShutdown()
            try await secondRunning.value
            // Anything published twice would arrive now.
            received += await fixture.receive(1, within: .seconds(1))
            #expect(received == (0..<150).map { "event-\($0)" })
        }
        await fixture.shutdown()
    }

    /// A relay whose publishing fails lets go of its lock (rather than leave it on a pooled
    /// connection, where no relay could take it again) and publishes everything once the
    /// broker answers again.
    @Test func aFailingRelayLetsGoOfItsLockAndCatchesUp() async throws {
        let fixture = try await RelayFixture.make()
        let publisher = GatedPublisher(fixture.client)
        publisher.open.withLock { $0 = false }
        let relay = fixture.relay(database: fixture.harness.database, publisher: publisher)
        try await fixture.harness.run { api in
            let room = try await api.roomOfThree().id
            let running = Task { try await relay.run() }
            try await fixture.addEvents(0...4, room: room)
            // While publishing fails, the lock is free between attempts (each a second apart).
            var freeSamples = 0
            for _ in 0..<20 {
                if try await fixture.lockHolders() == 0 { freeSamples += 1 }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(freeSamples > 0, "the lock stayed held while the relay kept failing")

            publisher.open.withLock { $0 = true }
            #expect(await fixture.receive(5) == (0..<5).map { "event-\($0)" })
            await relay.triggerGracefulShutdown()
            try await running.value
        }
        await fixture.shutdown()
    }
}

/// Redis down while a batch's events went out: the retry queues the batch's fan-out job, and
/// does not publish its events again (in the chaos run, hundreds of copies per member).
struct OutboxRelayUnqueuedFanoutTests {
    @Test func aBatchWhoseJobCouldNotBeQueuedIsNotPublishedAgain() async throws {
        let fixture = try await RelayFixture.make()
        let queue = FailingQueue(failures: 3)
        let relay = fixture.relay(database: fixture.harness.database, publisher: fixture.client, fanout: queue)
        try await fixture.harness.run { api in
            let room = try await api.roomOfThree().id
            let job = FanoutJob(roomID: Int64(room), event: "", audience: .readers).json()
            for index in 0..<3 {
                try await fixture.harness.database.client.query(
                    """
                    INSERT INTO messenger.outbox (chat_room_id, event, topic, fanout)
                    VALUES (\(room), \("event-\(index)"), \(fixture.topic), \(job))
                    """)
            }
            let running = Task { try await relay.run() }
            // Three failed attempts a second apart, then the job goes in.
            for _ in 0..<100 where queue.queued.withLock({ $0.isEmpty }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(queue.queued.withLock { $0.count } == 1)
            #expect(await fixture.receive(10, within: .seconds(2)) == (0..<3).map { "event-\($0)" })
            await relay.triggerGracefulShutdown()
            try await running.value
        }
        await fixture.shutdown()
    }
}

/// An event the broker refuses (over its size limit) must not hold every later event back:
/// it is dropped, and the relay goes on.
struct OutboxRelayRefusedEventTests {
    @Test func anEventTheBrokerRefusesIsDroppedAndTheRestGoOut() async throws {
        let fixture = try await RelayFixture.make()
        let relay = fixture.relay(
            database: fixture.harness.database, publisher: RefusingPublisher(client: fixture.client))
        try await fixture.harness.run { api in
            let room = try await api.roomOfThree().id
            try await fixture.addEvents(0...1, room: room)
            try await fixture.harness.database.client.query(
                "INSERT INTO messenger.outbox (chat_room_id, event, topic) VALUES (\(room), 'too large', \(fixture.topic))"
            )
            try await fixture.addEvents(2...3, room: room)
            let running = Task { try await relay.run() }
            // The batch is published again one event at a time: its first events twice (the
            // same payload, as clients drop by hash).
            var received: [String] = []
            for _ in 0..<20 where !received.contains("event-3") { received += await fixture.receive(1) }
            #expect(
                received.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                    == (0..<4).map { "event-\($0)" })
            try await fixture.addEvents(4...4, room: room)
            #expect(await fixture.receive(1) == ["event-4"])
            await relay.triggerGracefulShutdown()
            try await running.value
        }
        await fixture.shutdown()
    }
}

/// A broker that refuses every batch holding the event `too large`, as mosquitto refuses a
/// message over its `message_size_limit` (PUBACK 0x95), and passes everything else on.
struct RefusingPublisher: EventPublisher {
    let client: MQTTClient
    struct Refused: DependencyError {
        var isUnavailability: Bool { false }
    }

    func publish(topic: String, payload: String) async throws {
        try await publish(events: [(topic, payload)])
    }

    func publishTransient(topic: String, payload: String) async throws {
        try await publish(topic: topic, payload: payload)
    }

    func publish(events: [(topic: String, payload: String)]) async throws {
        if events.contains(where: { $0.payload == "too large" }) { throw Refused() }
        try await client.publish(events: events)
    }
}

/// A fan-out queue that refuses its first jobs, as one on a Redis that is down.
final class FailingQueue: JobQueue {
    let failures: Mutex<Int>
    let queued = Mutex<[String]>([])
    struct Down: Error {}

    init(failures: Int) { self.failures = Mutex(failures) }

    func enqueue(_ job: String) async throws {
        let fail = failures.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        if fail { throw Down() }
        queued.withLock { $0.append(job) }
    }
}

/// What went out leaves the outbox: a batch is deleted by the read of the next one, and
/// when no event follows, by a read of its own soon after (not left for the next commit).
struct OutboxRelayDeletionTests {
    @Test func aPublishedBatchIsDeletedWhenNoEventFollows() async throws {
        let fixture = try await RelayFixture.make()
        let relay = fixture.relay(database: fixture.harness.database, publisher: fixture.client)
        try await fixture.harness.run { api in
            let room = try await api.roomOfThree().id
            let running = Task { try await relay.run() }
            try await fixture.addEvents(0...2, room: room)
            #expect(await fixture.receive(3) == (0..<3).map { "event-\($0)" })
            var left: Int64?
            for _ in 0..<100 {
                left = try await fixture.rowsLeft()
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(left == 0, "published events stayed in the outbox")
            await relay.triggerGracefulShutdown()
            try await running.value
        }
        await fixture.shutdown()
    }
}

/// The relay's commits do not wait for the disk while it holds its lock; the connection it
/// hands back to the pool commits durably again, or a send stored on it later could be lost
/// in a crash after its sender was told it was stored.
struct OutboxRelaySessionTests {
    @Test func theRelaysConnectionGoesBackToThePoolCommittingDurably() async throws {
        let fixture = try await RelayFixture.make()
        try await fixture.harness.run { api in
            let room = try await api.roomOfThree().id
            // Two connections: the relay's, holding the lock, and its listener's.
            var configuration = fixture.harness.database.configuration
            configuration.maximumConnections = 2
            let settings = try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient {
                database in
                let relay = fixture.relay(database: database, publisher: fixture.client)
                let running = Task { try await relay.run() }
                try await fixture.addEvents(0...2, room: room)
                #expect(await fixture.receive(3) == (0..<3).map { "event-\($0)" })
                await relay.triggerGracefulShutdown()
                try await running.value
                // Both connections at once (each held a while, so the other lease needs the
                // other connection): the relay's is one of them.
                return try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            try await database.client.withConnection { connection in
                                let setting = try await connection.query("SHOW synchronous_commit", logger: .quiet)
                                    .first(String.self)
                                try await Task.sleep(for: .milliseconds(500))
                                return setting
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(settings == ["on", "on"])
        }
        await fixture.shutdown()
    }
}

/// A database with a room, an MQTT client for relays to publish with, and a subscriber to
/// the topic the test's events go to.
struct RelayFixture: Sendable {
    let harness: APIHarness
    let client: MQTTClient
    let subscriber: MQTTClient
    let topic = "relay-test/\(UUID().uuidString.prefix(8))"
    let queue: RedisJobQueue

    static func make() async throws -> RelayFixture {
        let harness = try await APIHarness.make()
        let services = try TestServices.shared()
        let fixture = RelayFixture(
            harness: harness, client: try await services.connectedMQTTClient(),
            subscriber: try await services.connectedMQTTClient(),
            queue: RedisJobQueue(name: "relay-\(UUID().uuidString.prefix(8))", pool: harness.redis))
        try await fixture.subscriber.subscribe(fixture.topic)
        return fixture
    }

    /// - Parameter fanout: where fan-out jobs go; the fixture's queue by default.
    func relay(
        database: PostgresPool, publisher: any EventPublisher, fanout: (any JobQueue)? = nil,
        alsoRunning: [any Service] = []
    ) -> ServiceGroup {
        let relay = OutboxRelay(
            database: database, publisher: publisher, fanout: fanout ?? queue, fileLinks: APIHarness.fileLinks,
            logger: .quiet, batchSize: 7)
        return ServiceGroup(
            configuration: .init(
                services: (alsoRunning + [relay]).map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                logger: .quiet))
    }

    /// Events `event-N` for the test's topic, one committed row each, then the relays' wake-up.
    func addEvents(_ range: ClosedRange<Int>, room: Int) async throws {
        for index in range {
            try await harness.database.client.query(
                "INSERT INTO messenger.outbox (chat_room_id, event, topic) VALUES (\(room), \("event-\(index)"), \(topic))"
            )
        }
        try await harness.database.client.query("SELECT pg_notify('parley_outbox', '')")
    }

    /// Up to `count` payloads from the test's topic.
    func receive(_ count: Int, within limit: Duration = .seconds(10)) async -> [String] {
        var received: [String] = []
        let deadline = ContinuousClock.now + limit
        while received.count < count, ContinuousClock.now < deadline {
            guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)) else { continue }
            received.append(String(decoding: message.payload, as: UTF8.self))
        }
        return received
    }

    /// The test's events still in the outbox.
    func rowsLeft() async throws -> Int64? {
        try await harness.database.client.query("SELECT count(*) FROM messenger.outbox WHERE topic = \(topic)")
            .first(Int64.self)
    }

    /// Sessions holding the relays' advisory lock in the test's database (PostgreSQL shows a
    /// bigint key as its high and low 32 bits).
    func lockHolders() async throws -> Int64? {
        let high = OutboxRelay.lockKey >> 32
        let low = OutboxRelay.lockKey & 0xffff_ffff
        return try await harness.database.client.query(
            """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
            AND classid::bigint = \(high) AND objid::bigint = \(low)
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        ).first(Int64.self)
    }

    func shutdown() async {
        await client.shutdown()
        await subscriber.shutdown()
    }
}

/// The broker as seen by a relay, failing while closed (a broker that went away).
final class GatedPublisher: EventPublisher {
    let open = Mutex(true)
    let inner: MQTTClient

    init(_ inner: MQTTClient) { self.inner = inner }

    struct Closed: Error {}

    func publish(topic: String, payload: String) async throws {
        guard open.withLock({ $0 }) else { throw Closed() }
        try await inner.publish(topic: topic, payload: payload)
    }

    func publishTransient(topic: String, payload: String) async throws {
        guard open.withLock({ $0 }) else { throw Closed() }
        try await inner.publishTransient(topic: topic, payload: payload)
    }

    func publish(events: [(topic: String, payload: String)]) async throws {
        guard open.withLock({ $0 }) else { throw Closed() }
        try await inner.publish(events: events)
    }
}
