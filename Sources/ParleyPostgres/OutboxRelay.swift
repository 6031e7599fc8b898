import Logging
import ParleyCore
import PostgresNIO
import ServiceLifecycle

/// Publishes the outbox: each committed event goes to its room topic, its fan-out job to
/// the queue, and only then is its row deleted.
///
/// Several relays may run; an advisory lock lets one publish at a time, which keeps each
/// room's events in commit order. A crash before the delete repeats an event (clients drop
/// duplicates by hash) but loses none. The relay wakes on `NOTIFY` from committing
/// transactions and also polls every second.
public struct OutboxRelay: Service {
    let database: PostgresPool
    let publisher: any EventPublisher
    let fanout: any JobQueue
    let logger: Logger
    let batchSize: Int

    /// Held for each batch; any constant shared by all relays.
    static let lockKey: Int64 = 0x6f75_7462_6f78  // "outbox"

    public init(
        database: PostgresPool, publisher: any EventPublisher, fanout: any JobQueue, logger: Logger,
        batchSize: Int = 100
    ) {
        self.database = database
        self.publisher = publisher
        self.fanout = fanout
        self.logger = logger
        self.batchSize = batchSize
    }

    public func run() async throws {
        let wake = WakeSignal()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await listen(wake) }
            group.addTask {
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    do {
                        while try await relayBatch() == batchSize {}
                    } catch {
                        logger.warning("outbox relay failed; retrying", metadata: ["error": "\(error)"])
                    }
                    await wake.wait(upTo: .seconds(1))
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Relays up to one batch; returns how many events it published.
    func relayBatch() async throws -> Int {
        try await database.transaction(logger: logger) { connection in
            // One relay publishes at a time, so each room's events go out in commit order;
            // the others stand by and take over when it stops.
            let active = try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", logger: logger
            ).first(Bool.self)
            guard active == true else { return 0 }
            let rows = try await connection.execute(OutboxBatchStatement(limit: Int32(batchSize)), logger: logger)
            var done: [Int64] = []
            var events: [(topic: String, payload: String)] = []
            var jobs: [String] = []
            for try await (id, topic, event, job) in rows {
                if let event { events.append((topic, event)) }
                if let job { jobs.append(job) }
                done.append(id)
            }
            // In commit order, acknowledged together; the fan-out jobs in one round trip.
            try await publisher.publish(events: events)
            try await fanout.enqueue(contentsOf: jobs)
            if !done.isEmpty {
                try await connection.query("DELETE FROM messenger.outbox WHERE id = ANY(\(done))", logger: logger)
            }
            return done.count
        }
    }

    /// Signals on every NOTIFY until cancelled, re-listening after connection failures.
    private func listen(_ wake: WakeSignal) async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: Outbox.channel) { notifications in
                        for try await _ in notifications { wake.signal() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
