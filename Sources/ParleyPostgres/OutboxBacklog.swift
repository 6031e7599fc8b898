import Logging
import Metrics
import ParleyCore
import PostgresNIO

/// How far behind the outbox relay is: events committed but not yet published, and how long
/// the oldest has waited. A relay that publishes keeps both near zero; one that is stuck lets
/// the age grow without bound while everything else looks healthy.
public struct OutboxBacklog: Sendable, Equatable {
    public let count: Int
    public let oldestAge: Duration

    public init(count: Int, oldestAge: Duration) {
        self.count = count
        self.oldestAge = oldestAge
    }

    /// Reads the backlog now and records it as `parley_outbox_backlog` and
    /// `parley_outbox_oldest_age_seconds`.
    public static func measure(_ database: PostgresPool, logger: Logger) async throws -> OutboxBacklog {
        let row = try await database.client.query(
            """
            SELECT count(*)::bigint, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
            FROM messenger.outbox
            """, logger: logger
        ).first((Int64, Double).self)
        let backlog = OutboxBacklog(
            count: Int(row?.0 ?? 0), oldestAge: .milliseconds(Int64(max(row?.1 ?? 0, 0) * 1000)))
        Gauge(label: "parley_outbox_backlog").record(backlog.count)
        Gauge(label: "parley_outbox_oldest_age_seconds").record(Double(backlog.oldestAge.components.seconds))
        return backlog
    }
}

/// Readiness of the `outbox` role: down when the oldest unpublished event is older than
/// `stallLimit`, so a relay that stopped publishing is seen (and named) by whoever watches
/// `/health/ready`.
public struct OutboxRelayProbe: DependencyProbe {
    public let name = "outbox-relay"
    let database: PostgresPool
    let stallLimit: Duration
    let logger: Logger

    public init(database: PostgresPool, stallLimit: Duration, logger: Logger) {
        self.database = database
        self.stallLimit = stallLimit
        self.logger = logger
    }

    public struct Stalled: Error, CustomStringConvertible {
        public let backlog: OutboxBacklog
        public var description: String {
            "the oldest of \(backlog.count) unpublished outbox events has waited \(backlog.oldestAge)"
        }
    }

    public func probe() async throws {
        let backlog = try await OutboxBacklog.measure(database, logger: logger)
        if backlog.oldestAge > stallLimit { throw Stalled(backlog: backlog) }
    }
}
