/// Polls one endpoint on a fixed schedule until its task is cancelled, one request at a time.
///
/// Probe `i` is due at `start + i * interval` and its latency counts from that time, as in
/// ``OpenLoop``: when an answer takes 2 s, the probes due meanwhile go out right after it and
/// record how long they waited, so a stalled server shows as seconds across many samples
/// instead of one slow sample among hundreds of fast ones.
enum HealthProbe {
    /// - Parameter request: one probe; true when the answer says live. Cancelled with the task.
    static func run(
        every interval: Duration, into recorder: LatencyRecorder, request: @Sendable () async throws -> Bool
    ) async {
        let step = UInt64(max(1, (interval / .nanoseconds(1)).rounded()))
        let start = Clock.nanoseconds()
        var index: UInt64 = 0
        while !Task.isCancelled {
            let intended = start + index * step
            index += 1
            let now = Clock.nanoseconds()
            if intended > now {
                do { try await Task.sleep(for: .nanoseconds(Int64(intended - now))) } catch { return }
            }
            let live: Bool
            do {
                live = try await request()
            } catch {
                live = false
            }
            if Task.isCancelled {
                // The step ended with this probe unanswered: it waited at least this long, which
                // matters when the server stalls across the end of the step.
                recorder.record(sinceIntended: intended)
                return
            }
            if live { recorder.record(sinceIntended: intended) } else { recorder.recordFailure() }
        }
    }
}
