import Logging
import ParleyCore
import ParleyRuntime
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// PostgreSQL streaming replicas that reads allowed to be a little stale may use
/// (``ParleyCore/ReplicaReads``), each only while it keeps up: a replica that has not replayed
/// what the primary had written `maxLag` ago, or does not answer, is skipped until it does.
/// Writes and the outbox never touch them.
///
/// Lag is measured in the primary's own terms: every `interval` the monitor reads the
/// primary's WAL position and each replica's replay position; a replica is current when it
/// has replayed at least the position the primary had `maxLag` before.
public final class ReadReplicas: Sendable {
    let replicas: [BoundedPostgresClient]
    let names: [String]
    let maxLag: Duration
    let interval: Duration
    let logger: Logger
    private let state: Mutex<State>

    struct State {
        var current: [Bool]
        var next = 0
        /// The primary's WAL positions, newest last, over the last `maxLag` and one more.
        var positions: [(at: ContinuousClock.Instant, lsn: UInt64)] = []
    }

    public init(
        configurations: [PostgresConfiguration], maxLag: Duration, interval: Duration = .milliseconds(500),
        logger: Logger
    ) {
        replicas = configurations.map { BoundedPostgresClient(configuration: $0, logger: logger) }
        names = configurations.map { "\($0.host):\($0.port)" }
        self.maxLag = maxLag
        self.interval = interval
        self.logger = logger
        // None is trusted until the monitor has seen it keep up.
        state = Mutex(State(current: Array(repeating: false, count: configurations.count)))
    }

    /// A current replica, in turn, with its index; nil when none is.
    func pick() -> (index: Int, client: BoundedPostgresClient)? {
        state.withLock { state in
            for offset in 0..<replicas.count {
                let index = (state.next + offset) % replicas.count
                if state.current[index] {
                    state.next = index + 1
                    return (index, replicas[index].answering(within: Self.answerTimeout))
                }
            }
            return nil
        }
    }

    /// How long a replica may take to start answering a read before the read goes to the
    /// primary: far above a healthy read's time, far below the 30 s a primary is given, so a
    /// replica that died unseen costs its readers a pause, not a failure.
    static let answerTimeout: Duration = .seconds(2)

    /// Skips the replica until the monitor sees it current again: a read on it failed.
    func skip(_ index: Int, because error: any Error) {
        let wasCurrent = state.withLock { state in
            defer { state.current[index] = false }
            return state.current[index]
        }
        guard wasCurrent else { return }
        logger.warning(
            "A read failed on a PostgreSQL replica; it is skipped until it keeps up again",
            metadata: ["replica": "\(names[index])", "error": "\(String(reflecting: error).prefix(300))"])
    }

    /// Marks every replica current, as the monitor would; for tests of what a read does when
    /// one is not.
    func assumeCurrent() {
        state.withLock { $0.current = Array(repeating: true, count: replicas.count) }
    }

    /// Runs the replicas' pools and the monitor until the process stops.
    func run(primary: BoundedPostgresClient) async {
        await withDiscardingTaskGroup { group in
            for replica in replicas { group.addTask { await replica.run() } }
            group.addTask { try? await cancelWhenGracefulShutdown { await self.monitor(primary: primary) } }
        }
    }

    private func monitor(primary: BoundedPostgresClient) async {
        while !Task.isCancelled {
            var current = Array(repeating: false, count: replicas.count)
            // Without the primary's position nothing can be judged: every replica is skipped.
            if let lsn = try? await position(of: primary, "pg_current_wal_lsn()") {
                let now = ContinuousClock.now
                let required = state.withLock { state in
                    state.positions.append((now, lsn))
                    // Keep the newest position at least maxLag old, and everything after it.
                    while state.positions.count > 1, state.positions[1].at <= now - maxLag {
                        state.positions.removeFirst()
                    }
                    // Younger than maxLag, the oldest position is a stricter bar: still safe.
                    return state.positions[0].lsn
                }
                for (index, replica) in replicas.enumerated() {
                    let replayed = try? await position(of: replica, "pg_last_wal_replay_lsn()")
                    current[index] = replayed.map { $0 >= required } ?? false
                }
            }
            let changed = state.withLock { state in
                defer { state.current = current }
                return state.current != current
            }
            if changed {
                logger.notice(
                    "PostgreSQL replicas in use changed",
                    metadata: ["replicas": "\(zip(names, current).map { "\($0)=\($1 ? "current" : "skipped")" })"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// A WAL position (`pg_lsn`, `X/Y` in hexadecimal) as a number.
    private func position(of client: BoundedPostgresClient, _ function: String) async throws -> UInt64? {
        let text = try await withTimeout(.seconds(1)) {
            try await client.query(PostgresQuery(unsafeSQL: "SELECT \(function)::text"), logger: self.logger)
                .first(String?.self) ?? nil
        }
        return text.flatMap(Self.lsn)
    }

    static func lsn(_ text: String) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16) else {
            return nil
        }
        return high << 32 | low
    }
}
