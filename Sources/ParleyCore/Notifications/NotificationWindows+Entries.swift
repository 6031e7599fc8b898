extension NotificationWindows {
    /// A relay batch's fan-out as the windows leave it: the copies of held new messages taken
    /// out (their pushes stay, as a pushes-only job to the room's readers; a message that
    /// pushes nobody leaves nothing), and the rooms that held any, in the order first held.
    public func admit(_ entries: [FanoutBatch.Entry], at now: Instant) -> (
        entries: [FanoutBatch.Entry], held: [Int64]
    ) {
        var kept: [FanoutBatch.Entry] = []
        var held: [Int64] = []
        kept.reserveCapacity(entries.count)
        for entry in entries {
            // The relay makes only new messages' jobs; the rest (room changes, invitations,
            // rejections) always go.
            guard let job = entry.made, job.audience == .readers, job.afterUserID == 0, job.pushesOnly != true else {
                kept.append(entry)
                continue
            }
            switch admit(room: job.roomID, at: now) {
            case .now:
                kept.append(entry)
            case .held:
                if !held.contains(job.roomID) { held.append(job.roomID) }
                if job.push != nil { kept.append(FanoutBatch.Entry(job.withPushesOnly(), event: nil)) }
            }
        }
        return (kept, held)
    }
}

extension FanoutJob {
    /// The same job with only its pushes left to do.
    public func withPushesOnly() -> FanoutJob {
        FanoutJob(
            roomID: roomID, event: "", audience: audience, userIDs: userIDs, afterUserID: afterUserID, push: push,
            pushesOnly: true, readersVersion: readersVersion, pushTokensVersion: pushTokensVersion,
            traceparent: traceparent)
    }
}
