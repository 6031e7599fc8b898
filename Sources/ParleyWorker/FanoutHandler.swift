import Foundation
import Logging
import ParleyCore
import ServiceLifecycle

/// The `fanout` role: copies events to the `messenger-notifications/{userId}` topic of every
/// user concerned.
///
/// A job is usually the relay's whole batch (``FanoutBatch``): the readers of all its rooms
/// are read in one query (or not at all: a room's readers are kept, see ``ReaderCache``),
/// every copy goes to the broker in one batch (in commit order), and the pushes of all its
/// events are worked out together. Readers of a large room are done in
/// chunks: a job publishes the first chunk and queues the rest as a job of its own before it
/// is acknowledged, so a crash repeats at most one chunk. Publishing twice is harmless: the
/// event's hash lets clients drop the duplicate. Pushes are queued (``PushFanout``) before the
/// rest of a room is.
public struct FanoutHandler: Sendable {
    let readers: any RoomReaders
    let publisher: any EventPublisher
    let queue: any JobQueue
    let chunkSize: Int
    /// `nil`: this deployment sends no pushes.
    let pushes: PushFanout?
    /// The reads' silent updates waiting to go (``PushFanout/readUpdates``): a service the
    /// process runs; nil without pushes.
    public var readUpdates: (any Service)? { pushes?.readUpdates }
    let logger: Logger
    let cache: ReaderCache
    /// Busy windows' summaries (``SummaryFanout``); nil: this deployment holds no copies.
    let summaries: SummaryFanout?

    public init(
        readers: any RoomReaders, publisher: any EventPublisher, queue: any JobQueue, chunkSize: Int = 500,
        pushes: PushFanout? = nil, summaries: (any RoomSummaries)? = nil, logger: Logger,
        cacheCapacity: Int = 1_000_000
    ) {
        self.readers = readers
        self.publisher = publisher
        self.queue = queue
        self.chunkSize = chunkSize
        self.pushes = pushes
        self.logger = logger
        self.cache = ReaderCache(capacity: cacheCapacity)
        self.summaries = summaries.map {
            SummaryFanout(summaries: $0, publisher: publisher, queue: queue, chunkSize: chunkSize)
        }
    }

    /// One job and the users it reaches in this run.
    private struct Delivery {
        let job: FanoutJob
        let users: [Int64]
        /// This step's span of the job's message (``ParleyCore/PipelineTrace``).
        let span: PipelineSpan?

        /// What the jobs this one queues carry: this step's span, or what it was given.
        var traceparent: String? { span?.traceparent ?? job.traceparent }
    }

    public func handle(_ payload: String) async throws {
        let summary: NotificationSummaryJob?
        let jobs: [FanoutJob]
        do {
            summary = try NotificationSummaryJob(payload: payload)
            jobs = summary == nil ? try FanoutBatch.decode(payload) : []
        } catch {
            // A malformed job can never succeed: straight to the dead letters. Only the
            // decoding: a summary whose read fails (PostgreSQL restarting) is retried.
            throw PermanentJobFailure(reason: "malformed fan-out job")
        }
        if let summary {
            // A parked backstop outlives a change of configuration: without summaries it has
            // nothing to do.
            try await summaries?.handle(summary)
            return
        }
        let readers = try await chunkReaders(of: jobs)
        let deliveries = jobs.map { job in
            let users = job.audience == .users ? job.userIDs : readers[Self.chunk(job)] ?? []
            let span = PipelineTrace.continueTrace("fan-out", from: job.traceparent, kind: .consumer)
            span?.set("parley.recipients", users.count)
            return Delivery(job: job, users: users, span: span)
        }
        do {
            try await deliver(deliveries)
        } catch {
            for delivery in deliveries { delivery.span?.end(failing: error) }
            throw error
        }
        for delivery in deliveries { delivery.span?.end() }
    }

    private func deliver(_ deliveries: [Delivery]) async throws {
        let published = deliveries.filter { $0.job.pushesOnly != true }
        let copies = published.flatMap { delivery in
            delivery.users.map { (topic: Topic.notifications($0), payload: delivery.job.event) }
        }
        if !copies.isEmpty { try await publisher.publish(events: copies) }
        try await queuePushes(deliveries)
        // The rest is queued only after this chunk went out: a retry of a failed chunk must not
        // start a second chain of continuations.
        // A held message's pushes-only job (``ParleyCore/NotificationWindows``) continues too.
        let continuations = deliveries.compactMap { delivery -> String? in
            let job = delivery.job
            guard job.audience == .readers, delivery.users.count == chunkSize, let last = delivery.users.last else {
                return nil
            }
            return FanoutJob(
                roomID: job.roomID, event: job.event, audience: .readers, afterUserID: last, push: job.push,
                pushesOnly: job.pushesOnly, pushTokensVersion: job.pushTokensVersion, traceparent: delivery.traceparent
            )
            .json()
        }
        if !continuations.isEmpty { try await queue.enqueue(contentsOf: continuations) }
    }

    /// The readers of every chunk the jobs reach: kept ones where their version is recent
    /// enough, the rest in one query (whole rooms read are kept for the next jobs).
    private func chunkReaders(of jobs: [FanoutJob]) async throws -> [ReaderChunk: [Int64]] {
        var readers: [ReaderChunk: [Int64]] = [:]
        var unknown = Set<ReaderChunk>()
        for job in jobs where job.audience == .readers {
            let chunk = Self.chunk(job)
            if chunk.after == 0, let version = job.readersVersion,
                let kept = cache.readers(of: job.roomID, atLeast: version)
            {
                readers[chunk] = kept
            } else {
                unknown.insert(chunk)
            }
        }
        guard !unknown.isEmpty else { return readers }
        let read = try await self.readers.readerIDs(of: unknown, limit: chunkSize)
        for chunk in unknown {
            let ids = read.ids[chunk] ?? []
            readers[chunk] = ids
            if chunk.after == 0, ids.count < chunkSize, let version = read.versions[chunk.roomID] {
                cache.store(roomID: chunk.roomID, version: version, readers: ids)
            }
        }
        return readers
    }

    private static func chunk(_ job: FanoutJob) -> ReaderChunk {
        ReaderChunk(roomID: job.roomID, after: job.afterUserID)
    }

    private func queuePushes(_ deliveries: [Delivery]) async throws {
        guard let pushes else { return }
        let requests = deliveries.compactMap { delivery in
            delivery.job.push.map {
                PushFanout.Request(
                    intent: $0, roomID: delivery.job.roomID, users: delivery.users,
                    tokensVersion: delivery.job.pushTokensVersion, traceparent: delivery.traceparent)
            }
        }
        guard !requests.isEmpty else { return }
        do {
            try await pushes.queuePushes(requests)
        } catch {
            // Only pushes were left to do: the queue retries the job with its back-off.
            if deliveries.allSatisfy({ $0.job.pushesOnly == true }) { throw error }
            // Pushes must not hold up delivery to the rest of the room: they become a job of
            // their own, retried on its own.
            logger.warning("queuing pushes failed; retrying them apart", metadata: ["error": "\(error)"])
            let jobs = requests.map { request in
                FanoutJob(
                    roomID: request.roomID, event: "", audience: .users, userIDs: request.users, push: request.intent,
                    pushesOnly: true, pushTokensVersion: request.tokensVersion, traceparent: request.traceparent)
            }
            try await queue.enqueue(contentsOf: jobs.map { $0.json() })
        }
    }
}
