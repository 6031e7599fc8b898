import Logging
import ParleyCore
import PostgresNIO
import ServiceLifecycle

/// Publishes the outbox: each committed event goes to its room topic, the fan-out jobs of a
/// batch to the queue as one job (``FanoutBatch``), and only then are their rows deleted.
///
/// Several relays may run; the one holding a session advisory lock publishes, which keeps
/// each room's events in commit order, and the others try for it every second. The lock is
/// held on one connection for as long as the relay runs, so a batch is two statements (read,
/// delete) rather than a locking transaction of five. A crash before the delete repeats an
/// event (clients drop duplicates by hash) but loses none. The relay wakes on `NOTIFY` from
/// committing transactions and also polls every second, so a missed `NOTIFY` costs a second.
///
/// Every statement on the held connections fails as soon as the connection closes or stops
/// answering (``PostgresNIO/PostgresConnection/whileOpen(within:_:)``): after a PostgreSQL
/// restart the relay lets go, leases a new connection, takes the lock again and catches up
/// from the table, in order.
public struct OutboxRelay: Service {
    let database: PostgresPool
    let publisher: any EventPublisher
    let fanout: any JobQueue
    let logger: Logger
    let batchSize: Int

    /// The active relay's lock; any constant shared by all relays.
    public static let lockKey: Int64 = 0x6f75_7462_6f78  // "outbox"
    /// How long one statement of the relay may take before its connection is given up.
    static let statementLimit: Duration = .seconds(10)

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
                while !Self.stopping {
                    do {
                        try await database.client.withConnection { connection in
                            try await relayWhileActive(on: connection, wake: wake)
                        }
                    } catch {
                        logger.warning("outbox relay failed; retrying", metadata: ["error": "\(error)"])
                    }
                    // A standby (or a relay that just failed) tries again in a second, however
                    // many commits wake it meanwhile.
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private static var stopping: Bool { Task.isShuttingDownGracefully || Task.isCancelled }

    /// Publishes for as long as this relay holds the lock and runs; returns at once if
    /// another relay holds it.
    func relayWhileActive(on connection: PostgresConnection, wake: WakeSignal) async throws {
        let active = try await connection.whileOpen(within: Self.statementLimit) {
            try await connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey))", logger: logger).first(Bool.self)
        }
        guard active == true else { return }
        logger.info("outbox relay active")
        do {
            while !Self.stopping {
                while try await relayBatch(on: connection) == batchSize {}
                await wake.wait(upTo: .seconds(1))
            }
        } catch {
            await release(connection)
            throw error
        }
        await release(connection)
    }

    /// Gives the lock up before the connection goes back to the pool; a connection that
    /// cannot is closed, which releases it too.
    private func release(_ connection: PostgresConnection) async {
        do {
            _ = try await connection.whileOpen(within: .seconds(2)) {
                try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            }
        } catch {
            try? await connection.close()
        }
    }

    /// Relays up to one batch; returns how many events it published.
    func relayBatch(on connection: PostgresConnection) async throws -> Int {
        let (done, events, jobs) = try await connection.whileOpen(within: Self.statementLimit) {
            let rows = try await connection.execute(OutboxBatchStatement(limit: Int32(batchSize)), logger: logger)
            var done: [Int64] = []
            var events: [OutboxEvent] = []
            var jobs: [FanoutBatch.Entry] = []
            for try await (id, topic, event, job) in rows {
                if let event { events.append(OutboxEvent(topic: topic, payload: event)) }
                if let job { jobs.append(FanoutBatch.Entry(job: job, event: event)) }
                done.append(id)
            }
            return (done, events, jobs)
        }
        guard !done.isEmpty else { return 0 }
        // In commit order, acknowledged together; the batch's fan-out as one job.
        try await publisher.publish(events: events.map { ($0.topic, $0.payload) })
        if !jobs.isEmpty { try await fanout.enqueue(FanoutBatch.encode(jobs)) }
        _ = try await connection.whileOpen(within: Self.statementLimit) {
            try await connection.execute(OutboxDeleteStatement(ids: done), logger: logger).allRows().count
        }
        return done.count
    }

    /// Signals on every NOTIFY until cancelled, re-listening after connection failures.
    private func listen(_ wake: WakeSignal) async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.whileOpen {
                        try await connection.listen(on: Outbox.channel) { notifications in
                            for try await _ in notifications { wake.signal() }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}

/// One event read from the outbox, to publish on its topic.
private struct OutboxEvent: Sendable {
    let topic: String
    let payload: String
}
