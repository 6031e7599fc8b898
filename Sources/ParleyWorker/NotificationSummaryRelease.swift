import Logging
import ParleyCore
import ServiceLifecycle

/// Ends the relay's notification windows (``ParleyCore/NotificationWindows``): when windows
/// that held messages end, their rooms' parked summaries are released together as one job
/// for the fan-out (``ParleyCore/ParkedJobs/release(_:joinedAfter:)``). Windows ending within
/// `granularity` of each other share a release. A release that fails leaves the summaries
/// parked: they go when due, a few seconds late. At shutdown, every held summary is released.
public struct NotificationSummaryRelease: Service {
    let windows: NotificationWindows
    let parked: any ParkedJobs
    let granularity: Duration
    let logger: Logger

    public init(
        windows: NotificationWindows, parked: any ParkedJobs, granularity: Duration = .milliseconds(50),
        logger: Logger
    ) {
        self.windows = windows
        self.parked = parked
        self.granularity = granularity
        self.logger = logger
    }

    public func run() async throws {
        let clock = ContinuousClock()
        await cancelWhenGracefulShutdown {
            var released = clock.now
            while !Task.isCancelled {
                // A window opened while this sleeps ends after the sleep: every window is as long.
                let next = windows.nextEnd ?? clock.now + windows.length
                do {
                    try await clock.sleep(until: max(next, released + granularity))
                } catch {
                    break
                }
                released = clock.now
                await release(windows.due(at: released))
            }
        }
        // Held messages' members hear of them now, not when the backstops are due.
        await release(windows.due(at: clock.now + windows.length * 2))
    }

    private func release(_ rooms: [Int64]) async {
        guard !rooms.isEmpty else { return }
        do {
            try await parked.release(
                rooms.map { NotificationSummaryJob(room: $0).payload }, joinedAfter: NotificationSummaryJob.marker)
        } catch {
            logger.warning(
                "releasing summaries failed; they go when their backstops are due",
                metadata: ["rooms": "\(rooms.count)", "error": "\(error)"])
        }
    }
}
