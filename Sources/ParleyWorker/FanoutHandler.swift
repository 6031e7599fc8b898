import Foundation
import Logging
import ParleyCore

/// The `fanout` role: copies an event to the `messenger-notifications/{userId}` topic of
/// every user concerned.
///
/// Readers of a large room are done in chunks: each job publishes one chunk and queues the
/// rest as a new job before it is acknowledged, so a crash repeats at most one chunk.
/// Publishing twice is harmless: the event's hash lets clients drop the duplicate.
/// Each chunk also queues its pushes (``PushFanout``) before the rest is queued.
public struct FanoutHandler: Sendable {
    let readers: any RoomReaders
    let publisher: any EventPublisher
    let queue: any JobQueue
    let chunkSize: Int
    /// `nil`: this deployment sends no pushes.
    let pushes: PushFanout?
    let logger: Logger

    public init(
        readers: any RoomReaders, publisher: any EventPublisher, queue: any JobQueue, chunkSize: Int = 500,
        pushes: PushFanout? = nil, logger: Logger
    ) {
        self.readers = readers
        self.publisher = publisher
        self.queue = queue
        self.chunkSize = chunkSize
        self.pushes = pushes
        self.logger = logger
    }

    public func handle(_ payload: String) async throws {
        let job: FanoutJob
        do {
            job = try JSONCoding.decoder.decode(FanoutJob.self, from: Data(payload.utf8))
        } catch {
            // A malformed job can never succeed: straight to the dead letters.
            throw PermanentJobFailure(reason: "malformed fan-out job")
        }
        if job.pushesOnly == true, let intent = job.push {
            try await pushes?.queuePushes(intent, roomID: job.roomID, users: job.userIDs)
            return
        }
        let users: [Int64] =
            switch job.audience {
            case .users: job.userIDs
            case .readers: try await readers.readerIDs(roomID: job.roomID, after: job.afterUserID, limit: chunkSize)
            }
        try await publish(job.event, to: users)
        if let intent = job.push, let pushes {
            do {
                try await pushes.queuePushes(intent, roomID: job.roomID, users: users)
            } catch {
                // Pushes must not hold up delivery to the rest of the room: they become a job
                // of their own, retried on its own.
                logger.warning("queuing pushes failed; retrying them apart", metadata: ["error": "\(error)"])
                try await queue.enqueue(
                    FanoutJob(
                        roomID: job.roomID, event: "", audience: .users, userIDs: users, push: intent, pushesOnly: true
                    ).json())
            }
        }
        // The rest is queued only after this chunk went out: a retry of a failed chunk must not
        // start a second chain of continuations.
        if job.audience == .readers, users.count == chunkSize, let last = users.last {
            try await queue.enqueue(
                FanoutJob(
                    roomID: job.roomID, event: job.event, audience: .readers, afterUserID: last, push: job.push
                ).json())
        }
    }

    /// One batch: the broker gets every copy at once and the acknowledgements overlap.
    private func publish(_ event: String, to users: [Int64]) async throws {
        try await publisher.publish(events: users.map { (Topic.notifications($0), event) })
    }
}
