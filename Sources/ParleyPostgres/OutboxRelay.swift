import Logging
import ParleyCore
import ParleyRuntime
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Publishes the outbox: each committed event goes where its ``ParleyCore/DomainEvent/delivery(roomUID:)``
/// says (its room topic, the broker plugin's control topic), the fan-out jobs of a batch to the
/// queue as one job (``FanoutBatch``), and only then are their rows deleted.
/// A ``FanoutPlanner`` may take part of the fan-out: copies to rooms whose readers a fan-out
/// in the same process keeps go out with the batch's events, with no hop through Redis.
///
/// Several relays may run; the one holding a session advisory lock publishes, which keeps
/// each room's events in commit order, and the others try for it every second. The lock is
/// held on one connection for as long as the relay runs, so a batch is one statement: the
/// read of the next batch skips the rows published before and, every few batches, deletes
/// them (rather than a locking transaction of five, or a read and a delete). A crash before
/// that delete repeats those events (clients drop duplicates by hash) but loses none. The
/// relay wakes on `NOTIFY` from committing transactions and also polls every second, so a
/// missed `NOTIFY` costs a second. Sends stored by the ingest in its own process wake it
/// directly while it holds the lock, without a `NOTIFY` (``LocalRelay``).
/// A new message's event is encoded here, once, from the stored row (the sender's
/// transaction records only the message's id, so that storing it is one statement), or from
/// the message its send handed over when it was stored in this process (<doc:RelayHandOver>).
///
/// Every statement on the held connections fails as soon as the connection closes or stops
/// answering (``PostgresNIO/PostgresConnection/whileOpen(within:_:)``): after a PostgreSQL
/// restart the relay lets go, leases a new connection, takes the lock again and catches up
/// from the table, in order.
public struct OutboxRelay: Service {
    let database: PostgresPool
    let publisher: any EventPublisher
    let fanout: any JobQueue
    /// Copies this relay publishes itself (a fan-out role in the same process, whose kept
    /// readers it reads); nil queues every job.
    let planner: (any FanoutPlanner)?
    /// The events some webhook subscribes to go to their queue; nil: no webhooks role.
    let webhooks: WebhookFeed?
    /// Holds busy rooms' copies for their windows' summaries; nil: every copy goes at once.
    let holding: NotificationHolding?
    let logger: Logger
    let batchSize: Int
    /// `PARLEY_RECEIPTS_MAX_MEMBERS`: a new message in a larger room has no receipts.
    let receiptsMaxMembers: Int
    /// Which rooms are small enough for receipts, by readers version.
    let smallRooms = SmallRooms()
    /// Signs file URLs in new messages' events, as the API does.
    let fileLinks: FileLinks
    /// A batch whose events went out but whose fan-out job could not be queued (Redis was
    /// down): the retry queues the job alone. Publishing the batch again on every retry sent
    /// each member hundreds of copies during a Redis outage in the chaos run.
    private let unqueued = Unqueued()
    /// Rows published and handed on whose deletion waits for the next few batches'.
    private let undeleted = Undeleted()
    /// How the sends stored in this process wake this relay while it is active; nil: only by
    /// `NOTIFY`.
    let local: LocalRelay?

    /// The active relay's lock; any constant shared by all relays.
    public static let lockKey: Int64 = 0x6f75_7462_6f78  // "outbox"
    /// How long one statement of the relay may take before its connection is given up.
    static let statementLimit: Duration = .seconds(10)

    public init(
        database: PostgresPool, publisher: any EventPublisher, fanout: any JobQueue,
        planner: (any FanoutPlanner)? = nil, webhooks: WebhookFeed? = nil, holding: NotificationHolding? = nil,
        fileLinks: FileLinks, logger: Logger, batchSize: Int = 100,
        receiptsMaxMembers: Int = MessageReceipts.defaultMaxMembers, local: LocalRelay? = nil
    ) {
        self.local = local
        self.receiptsMaxMembers = receiptsMaxMembers
        self.database = database
        self.publisher = publisher
        self.fanout = fanout
        self.planner = planner
        self.webhooks = webhooks
        self.holding = holding
        self.fileLinks = fileLinks
        self.logger = logger
        self.batchSize = batchSize
    }

    public func run() async throws {
        let wake = local?.wake ?? WakeSignal()
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
        // Its commits do not wait for the disk while it holds the lock: a relay commit only
        // deletes published rows (and indexes their words), and one lost in a crash leaves
        // them to be published and deleted again, the repeat a crash before the delete already
        // makes (same `hash`); no event is lost. WAL is written in order, so the next send's
        // durable commit takes the relay's to the disk. At chat rates, where a message is a
        // batch of its own, that is one `fdatasync` a message fewer. Inside the `do`: a failure
        // of the setting too gives the lock back before the connection returns to the pool.
        do {
            try await connection.whileOpen(within: Self.statementLimit) {
                _ = try await connection.query("SET synchronous_commit = off", logger: logger).collect()
            }
            // From here the sends stored in this process wake it without a NOTIFY; the first read
            // below finds what committed before.
            local?.activated(true)
            while !Self.stopping {
                if try await relayBatch(on: connection) == batchSize { continue }
                // After a batch, the next commit's NOTIFY usually comes within milliseconds; a
                // quiet outbox has its published rows deleted by a read of its own when they
                // are due, and then waits for the next commit.
                await wake.wait(upTo: undeleted.wait(at: .now))
            }
            let published = undeleted.ids
            if !published.isEmpty {
                try await delete(published, on: connection)
                undeleted.removeAll()
            }
        } catch {
            await release(connection)
            throw error
        }
        await release(connection)
    }

    /// Gives the lock up, and the session's setting, before the connection goes back to the
    /// pool; a connection that cannot is closed, which releases both too.
    private func release(_ connection: PostgresConnection) async {
        // Before the lock goes: a send that finds this relay inactive notifies whichever holds it next.
        local?.activated(false)
        do {
            _ = try await connection.whileOpen(within: .seconds(2)) {
                _ = try await connection.query("RESET synchronous_commit", logger: logger).collect()
                return try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                    .collect()
            }
        } catch {
            try? await connection.close()
        }
    }

    /// Relays up to one batch after the rows published and not deleted yet, deleting those
    /// in the same statement when they are due (``Undeleted``); returns how many rows it
    /// published.
    func relayBatch(on connection: PostgresConnection) async throws -> Int {
        let published = undeleted.ids
        let deleting = undeleted.isDue(at: .now)
        let batch = OutboxBatchStatement(limit: Int32(batchSize), published: published, links: fileLinks)
        let read = try await connection.whileOpen(within: Self.statementLimit) {
            try await self.read(batch, deleting: deleting, on: connection)
        }
        if deleting { undeleted.removeAll() }
        guard !read.isEmpty else { return 0 }
        let ids = read.map(\.id)
        if let (published, jobs) = unqueued.batch(heading: ids) {
            try await handOn(jobs, for: published)
            undeleted.add(published, at: .now)
            return published.count
        }
        let rows = try await connection.whileOpen(within: Self.statementLimit) {
            try await encodingNewMessages(read, on: connection)
        }
        for row in rows {
            if let unreadable = row.unreadable {
                logger.error("an outbox event this server cannot read; dropped", metadata: ["reason": "\(unreadable)"])
            }
        }
        let spans = RelaySpans(rows)
        // In commit order, with the copies the planner could make, acknowledged together; the
        // rest of the batch's fan-out as one job. A window that holds its first message parks
        // its summary before the rows go.
        var entries = spans.entries(of: rows)
        var jobs: [Unqueued.Job] = []
        var backstops: NotificationHolding.Backstops?
        if let holding {
            let admitted = holding.windows.admit(entries, at: .now)
            entries = admitted.entries
            backstops = holding.backstops(of: admitted.held)
            if let backstops { jobs.append(.init(queue: backstops.queue, jobs: backstops.jobs)) }
        }
        let plan = planner?.plan(entries) ?? FanoutPlan(queued: entries)
        do {
            try await publish(rows.flatMap(\.events) + plan.copies)
            if !plan.queued.isEmpty { jobs.append(.init(queue: fanout, job: FanoutBatch.encode(plan.queued))) }
            if let webhooks, let job = await webhooks.job(of: rows) {
                jobs.append(.init(queue: webhooks.queue, job: job))
            }
            try await handOn(jobs, for: ids)
        } catch {
            spans.end(failing: error)
            throw error
        }
        if let backstops { holding?.windows.markParked(backstops.windows) }
        spans.end()
        undeleted.add(ids, at: .now)
        return ids.count
    }

    /// The next batch's rows, deleting the published ones when `deleting`. While nothing but
    /// this process's sends committed since the last read, the rows come without their new
    /// messages, which those sends handed over (``LocalRelay``): the batch then ends before the
    /// first row whose message is not here yet (a send whose commit is still being confirmed;
    /// its wake-up comes next). A batch whose first such message is missing (another process's
    /// send whose `NOTIFY` is still on its way, say) is read in full.
    private func read(_ batch: OutboxBatchStatement, deleting: Bool, on connection: PostgresConnection) async throws
        -> [OutboxBatchStatement.Row]
    {
        var deleting = deleting
        if let local, local.mayReadRowsOnly() {
            let statement = OutboxRowsStatement(batch: batch)
            let rows =
                deleting
                ? try await connection.execute(statement, logger: logger).allRows()
                : try await connection.execute(OutboxRowsReadStatement(rows: statement), logger: logger).allRows()
            let (count, messages) = local.take(leading: rows.map { $0.awaiting?.messageID })
            if count > 0 || rows.isEmpty {
                return rows.prefix(count).map { row in
                    row.awaiting.flatMap { messages[$0.messageID] }.map(row.receiving) ?? row
                }
            }
            // Deleted already: the read in full need not.
            deleting = false
        }
        let rows =
            deleting
            ? try await connection.execute(batch, logger: logger).allRows()
            : try await connection.execute(OutboxReadStatement(batch: batch), logger: logger).allRows()
        local?.discard(rows.compactMap { $0.newMessage?.message.id })
        return rows
    }

    /// The relay's span of each traced message in a batch (``ParleyCore/PipelineTrace``):
    /// from its read until its event and fan-out are handed on. None when tracing is off.
    struct RelaySpans {
        let spans: [PipelineSpan?]

        init(_ rows: [OutboxBatchStatement.Row]) {
            spans =
                PipelineTrace.isOn
                ? rows.map { row in
                    let span = PipelineTrace.continueTrace("outbox relay", from: row.traceparent, kind: .producer)
                    span?.set("parley.batch.events", rows.count)
                    return span
                } : []
        }

        /// The rows' fan-out entries, each traced one's job continuing its relay span.
        func entries(of rows: [OutboxBatchStatement.Row]) -> [FanoutBatch.Entry] {
            guard !spans.isEmpty else { return rows.flatMap(\.fanout) }
            return zip(rows, spans).flatMap { row, span in row.fanout.map { $0.continuing(span?.traceparent) } }
        }

        func end(failing error: (any Error)? = nil) {
            for span in spans { span?.end(failing: error) }
        }
    }

    /// Publishes a batch's events. An event the broker refuses (not an outage: one larger than
    /// its `message_size_limit`, say) would be refused on every retry and hold every room's
    /// events behind it: the batch then goes one event at a time, and a refused event is
    /// dropped with an error in the log (its message is in the history; clients catch up there).
    private func publish(_ events: [(topic: String, payload: String)]) async throws {
        do {
            try await publisher.publish(events: events)
        } catch let refusal as any DependencyError where !refusal.isUnavailability {
            for event in events {
                do {
                    try await publisher.publish(events: [event])
                } catch let refusal as any DependencyError where !refusal.isUnavailability {
                    logger.error(
                        "the broker refused an event; dropped",
                        metadata: [
                            "topic": "\(event.topic)", "bytes": "\(event.payload.utf8.count)", "error": "\(refusal)",
                        ])
                }
            }
        }
    }

    /// The fan-out job of a published batch, until it is queued. The batch's rows still head
    /// the outbox (they are deleted only after the job is queued), so a read finds them first,
    /// perhaps followed by rows committed since.
    final class Unqueued: Sendable {
        /// Jobs for a queue (the fan-out's, the webhooks', parked summaries), in one round trip.
        struct Job: Sendable {
            let queue: any JobQueue
            let jobs: [String]

            init(queue: any JobQueue, job: String) { self.init(queue: queue, jobs: [job]) }

            init(queue: any JobQueue, jobs: [String]) {
                self.queue = queue
                self.jobs = jobs
            }
        }

        private let state = Mutex<(ids: [Int64], jobs: [Job])?>(nil)

        func remember(_ jobs: [Job], for ids: [Int64]) { state.withLock { $0 = (ids, jobs) } }
        func clear() { state.withLock { $0 = nil } }

        /// The remembered batch, when `ids` (a fresh read) begin with its rows.
        func batch(heading ids: [Int64]) -> (ids: [Int64], jobs: [Job])? {
            state.withLock { state in
                guard let state, ids.starts(with: state.ids) else { return nil }
                return state
            }
        }
    }

    /// Queues a published batch's jobs in order; those a failure left are remembered, and the
    /// next read of the same rows queues them alone.
    private func handOn(_ jobs: [Unqueued.Job], for ids: [Int64]) async throws {
        for (index, job) in jobs.enumerated() {
            do {
                try await job.queue.enqueue(contentsOf: job.jobs)
            } catch {
                unqueued.remember(Array(jobs[index...]), for: ids)
                throw error
            }
        }
        unqueued.clear()
    }

    private func delete(_ published: [Int64], on connection: PostgresConnection) async throws {
        _ = try await connection.whileOpen(within: Self.statementLimit) {
            try await connection.execute(OutboxDeleteStatement(ids: published), logger: logger).allRows().count
        }
    }

    /// Signals on every NOTIFY until cancelled, re-listening after connection failures.
    private func listen(_ wake: WakeSignal) async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.whileOpen {
                        try await connection.listen(on: Outbox.channel) { notifications in
                            for try await _ in notifications {
                                if let local { local.heardNotify() } else { wake.signal() }
                            }
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
