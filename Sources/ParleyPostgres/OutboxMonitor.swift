import Logging
import ParleyRuntime
import ServiceLifecycle

/// Records the outbox backlog every few seconds, so `/metrics` shows a relay falling behind
/// even when nobody asks `/health/ready`; and the open reports (``OpenReports``) beside it.
public struct OutboxMonitor: Service {
    let database: PostgresPool
    let interval: Duration
    let logger: Logger

    public init(database: PostgresPool, interval: Duration = .seconds(5), logger: Logger) {
        self.database = database
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await Periodically.run(every: interval) {
            // A failed reading leaves the last one; readiness reports PostgreSQL itself.
            _ = try? await OutboxBacklog.measure(database, logger: logger)
            try? await OpenReports.measure(database, logger: logger)
        }
    }
}
