import Foundation
import ParleyCore

/// The fan-out's push step: one `push` job per device of each recipient who should be
/// pushed now (not the actor, not a muted room, not in quiet hours unless the room passes).
///
/// A repeated chunk queues its pushes again; every push of a room carries the room as its
/// collapse id, so a device shows the duplicate in place of the first.
public struct PushFanout: Sendable {
    let audience: any PushAudience
    let queue: any JobQueue
    let composer: PushComposer

    public init(audience: any PushAudience, queue: any JobQueue, composer: PushComposer = PushComposer()) {
        self.audience = audience
        self.queue = queue
        self.composer = composer
    }

    func queuePushes(_ intent: PushIntent, roomID: Int64, users: [Int64], at now: Date = Date()) async throws {
        let users = users.filter { $0 != intent.actorID }
        guard !users.isEmpty else { return }
        // Most members of most rooms have no device to push to: then nothing more is asked.
        let recipients = try await audience.recipients(roomID: roomID, userIDs: users)
        guard !recipients.isEmpty else { return }
        // A room deleted since the event has nobody left to tell.
        guard let context = try await audience.context(roomID: roomID, actorID: intent.actorID) else { return }
        let jobs = composer.jobs(for: intent, roomID: roomID, context: context, recipients: recipients, at: now)
        try await queue.enqueue(contentsOf: jobs.map { $0.json() })
    }
}
