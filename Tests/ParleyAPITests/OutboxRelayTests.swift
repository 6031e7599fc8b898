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
/// and a standby takes over when the active one stops.
struct OutboxRelayTests {
    @Test func oneOfTwoRelaysPublishesEachEventOnceInOrderAndTheOtherTakesOver() async throws {
        let harness = try await AccountsHarness.make()
        let services = try TestServices.shared()
        let publisher = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        let subscriber = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        for client in [publisher, subscriber] {
            try client.start()
            try await client.waitUntilConnected(timeout: .seconds(5))
        }
        let topic = "relay-test/\(UUID().uuidString.prefix(8))"
        try await subscriber.subscribe(topic)
        let queue = RedisJobQueue(name: "relay-\(UUID().uuidString.prefix(8))", pool: harness.redis)
        try await harness.run { client in
            // A pool of its own per relay, as in worker processes of their own: a lock left on a
            // pooled connection must not pass for the next relay's.
            @Sendable func relay() -> ServiceGroup {
                let database = PostgresPool(configuration: harness.database.configuration, logger: .quiet)
                return ServiceGroup(
                    configuration: .init(
                        services: [
                            .init(service: database),
                            .init(
                                service: OutboxRelay(
                                    database: database, publisher: publisher, fanout: queue, logger: .quiet,
                                    batchSize: 7)),
                        ], logger: .quiet))
            }
            var received: [String] = []
            func receive(until count: Int, within limit: Duration = .seconds(10)) async {
                let deadline = ContinuousClock.now + limit
                while received.count < count, ContinuousClock.now < deadline {
                    guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)) else { continue }
                    received.append(String(decoding: message.payload, as: UTF8.self))
                }
            }
            let room = try await client.roomOfThree().id
            let database = harness.database
            func addEvents(_ range: ClosedRange<Int>) async throws {
                for index in range {
                    try await database.client.query(
                        """
                        INSERT INTO messenger.outbox (chat_room_id, event, topic)
                        VALUES (\(room), \("event-\(index)"), \(topic))
                        """)
                }
                try await database.client.query("SELECT pg_notify('parley_outbox', '')")
            }

            let first = relay()
            let firstRunning = Task { try await first.run() }
            try await addEvents(0...49)
            await receive(until: 50)
            let second = relay()
            let secondRunning = Task { try await second.run() }
            try await addEvents(50...99)
            await receive(until: 100)
            // The active relay stops: the standby tries for the lock within a second.
            await first.triggerGracefulShutdown()
            try await firstRunning.value
            try await addEvents(100...149)
            await receive(until: 150)
            await second.triggerGracefulShutdown()
            try await secondRunning.value
            // Anything published twice would arrive now.
            await receive(until: 151, within: .seconds(1))
            #expect(received == (0..<150).map { "event-\($0)" })
        }
        await publisher.shutdown()
        await subscriber.shutdown()
    }

    /// A relay whose publishing fails lets go of its lock (rather than leave it on a pooled
    /// connection, where no relay could take it again) and publishes everything once the
    /// broker answers again.
    @Test func aFailingRelayLetsGoOfItsLockAndCatchesUp() async throws {
        let harness = try await AccountsHarness.make()
        let services = try TestServices.shared()
        let client = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        let subscriber = try MQTTClient(configuration: services.mqtt(), logger: .quiet)
        for mqtt in [client, subscriber] {
            try mqtt.start()
            try await mqtt.waitUntilConnected(timeout: .seconds(5))
        }
        let topic = "relay-test/\(UUID().uuidString.prefix(8))"
        try await subscriber.subscribe(topic)
        let publisher = GatedPublisher(client)
        publisher.open.withLock { $0 = false }
        let queue = RedisJobQueue(name: "relay-\(UUID().uuidString.prefix(8))", pool: harness.redis)
        let relay = ServiceGroup(
            configuration: .init(
                services: [
                    .init(
                        service: OutboxRelay(
                            database: harness.database, publisher: publisher, fanout: queue, logger: .quiet))
                ], logger: .quiet))

        try await harness.run { api in
            let room = try await api.roomOfThree().id
            let database = harness.database
            let running = Task { try await relay.run() }
            for index in 0..<5 {
                try await database.client.query(
                    "INSERT INTO messenger.outbox (chat_room_id, event, topic) VALUES (\(room), \("event-\(index)"), \(topic))"
                )
            }
            // While publishing fails, the lock is free between attempts (each a second apart).
            var freeSamples = 0
            for _ in 0..<20 {
                let holders = try await database.client.query(
                    """
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                    AND classid = 28533 AND objid = 1952608120
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """
                ).first(Int64.self)
                if holders == 0 { freeSamples += 1 }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(freeSamples > 0, "the lock stayed held while the relay kept failing")

            publisher.open.withLock { $0 = true }
            var received: [String] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while received.count < 5, ContinuousClock.now < deadline {
                guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)) else { continue }
                received.append(String(decoding: message.payload, as: UTF8.self))
            }
            #expect(received == (0..<5).map { "event-\($0)" })
            await relay.triggerGracefulShutdown()
            try await running.value
        }
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
