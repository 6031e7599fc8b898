import ParleyCore

/// The relay's share of the fan-out when the `outbox` and `fanout` roles run in one process:
/// a new message to a room whose readers the fan-out keeps (at the message's readers version
/// or later, see ``ReaderCache``) has its copies published by the relay with the batch's own
/// events, so it costs no queue entry, no read of it and no second batch of publishes.
///
/// Everything else goes to the queue as before: rooms not kept (first messages, a change of
/// readers, rooms larger than a chunk), jobs of other events, and the pushes of a message
/// when any reader may have a push token (as a pushes-only job: composing them needs the
/// database), a message held for its window's summary included. Delivery stays at least once: the copies go out before the relay deletes the
/// batch's rows, like its events.
public struct InlineFanout: FanoutPlanner {
    let readers: ReaderCache
    /// `nil`: this deployment sends no pushes.
    let pushes: PushFanout?

    /// Plans with what `handler` keeps.
    public init(sharing handler: FanoutHandler) {
        readers = handler.cache
        pushes = handler.pushes
    }

    public func plan(_ entries: [FanoutBatch.Entry]) -> FanoutPlan {
        var plan = FanoutPlan()
        for entry in entries {
            guard let job = entry.made, job.audience == .readers, job.afterUserID == 0,
                let version = job.readersVersion, let kept = readers.readers(of: job.roomID, atLeast: version)
            else {
                plan.queued.append(entry)
                continue
            }
            // A held message's job has only pushes (``ParleyCore/NotificationWindows``).
            if job.pushesOnly != true, let event = entry.event {
                plan.copies += kept.map { (Topic.notifications($0), event) }
            }
            if let push = job.push, let pushes,
                !pushes.candidates(of: push, among: kept, tokensVersion: job.pushTokensVersion).isEmpty
            {
                let pushes = FanoutJob(
                    roomID: job.roomID, event: "", audience: .users, userIDs: kept, push: push, pushesOnly: true,
                    pushTokensVersion: job.pushTokensVersion, traceparent: job.traceparent)
                plan.queued.append(FanoutBatch.Entry(pushes, event: nil))
            }
        }
        return plan
    }
}
