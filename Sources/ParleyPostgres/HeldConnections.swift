import ParleyRuntime
import PostgresNIO
import Synchronization

/// Pooled connections kept leased between single statements (``BoundedPostgresClient``).
///
/// PostgresNIO 1.33.2's pool arms an idle timer (a task, a task group of two, a libdispatch
/// timer) each time a connection falls idle and cancels it at the connection's next lease: once
/// per statement, 12–15 % of `serve`'s CPU for a request that reads PostgreSQL. A minimum of
/// open connections would spare them, but the pool cannot keep one safely (see
/// <doc:PostgresNIO>). Here a holder task leases a connection and keeps it until it has been
/// idle for `retireAfter`, closes, or the pool shuts down; single statements take a held
/// connection and put it back without the pool's lease and release. At most `limit` are held,
/// so transactions, which lease from the pool, keep the rest of it.
final class HeldConnections: Sendable {
    struct Held: Sendable {
        let connection: PostgresConnection
        fileprivate let release: CheckedContinuation<Void, Never>
    }

    private struct State {
        var idle: [(held: Held, since: ContinuousClock.Instant)] = []
        /// Taken for a statement. A statement written into a connection that closed a moment
        /// before may never end (PostgresNIO drops it): the sweep gives such a connection back.
        var taken: [ObjectIdentifier: Held] = [:]
        /// Holders with a connection (idle or taken) or waiting for one.
        var holders = 0
        var shutDown = false
        var sweep: RepeatingDeadline?
    }

    let limit: Int
    let retireAfter: Duration
    private let pool: PostgresClient
    private let state = Mutex(State())

    init(pool: PostgresClient, limit: Int, retireAfter: Duration) {
        self.pool = pool
        self.limit = limit
        self.retireAfter = retireAfter
    }

    /// An open held connection for one statement, or nil (then the caller leases from the
    /// pool and another holder starts, up to `limit`).
    func take() -> Held? {
        var closed: [Held] = []
        var startHolder = false
        let taken: Held? = state.withLock { state in
            while let (held, _) = state.idle.popLast() {
                if held.connection.isClosed {
                    closed.append(held)
                } else {
                    state.taken[ObjectIdentifier(held.connection)] = held
                    return held
                }
            }
            if !state.shutDown, state.holders < limit {
                state.holders += 1
                startHolder = true
            }
            return nil
        }
        for held in closed { held.release.resume() }
        if startHolder { hold() }
        return taken
    }

    /// Gives a taken connection back: kept when still open, returned to the pool when not;
    /// nothing when the sweep or a shutdown already returned it.
    func put(_ held: Held) {
        let release = state.withLock { state -> Bool? in
            guard state.taken.removeValue(forKey: ObjectIdentifier(held.connection)) != nil else { return nil }
            guard !state.shutDown, !held.connection.isClosed else { return true }
            state.idle.append((held, .now))
            return false
        }
        if release == true { held.release.resume() }
    }

    /// Returns every held connection to the pool, idle or taken; no more are held. Called as
    /// the pool shuts down: its close ends what still runs on a taken one, and the holders end.
    func shutDown() {
        let (all, sweep) = state.withLock { state in
            state.shutDown = true
            defer {
                state.idle = []
                state.taken = [:]
                state.sweep = nil
            }
            return (state.idle.map(\.held) + state.taken.values, state.sweep)
        }
        sweep?.stop()
        for held in all { held.release.resume() }
    }

    /// Connections held now, idle or taken, or being leased (for tests).
    var count: Int { state.withLock { $0.holders } }

    /// Held connections not taken (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }

    private func hold() {
        // Detached: a holder outlives the statement that started it, and keeps none of its
        // task-locals (logger metadata, trace context).
        Task.detached { [self] in
            _ = try? await pool.withConnection { connection in
                await withCheckedContinuation { (release: CheckedContinuation<Void, Never>) in
                    arrive(Held(connection: connection, release: release))
                }
            }
            state.withLock { $0.holders -= 1 }
        }
    }

    private func arrive(_ held: Held) {
        let (keep, startSweep) = state.withLock { state -> (Bool, Bool) in
            guard !state.shutDown else { return (false, false) }
            state.idle.append((held, .now))
            return (true, state.sweep == nil)
        }
        guard keep else { return held.release.resume() }
        if startSweep {
            // The pool's idle timeout closes a connection only once it is given back.
            let sweep = Deadlines.shared.every(min(.seconds(1), retireAfter / 2)) { [weak self] in
                self?.retireIdle() ?? false
            }
            let stopNow = state.withLock { state in
                guard !state.shutDown, state.sweep == nil else { return true }
                state.sweep = sweep
                return false
            }
            if stopNow { sweep.stop() }
        }
    }

    /// Gives back what has been idle for `retireAfter`, and what closed (idle or taken);
    /// false once shut down or with nothing held (the sweep ends; the next arrival restarts it).
    private func retireIdle() -> Bool {
        let now = ContinuousClock.now
        let (retired, running) = state.withLock { state -> ([Held], Bool) in
            guard !state.shutDown else { return ([], false) }
            var retired: [Held] = []
            state.idle.removeAll { entry in
                let old = now - entry.since >= retireAfter || entry.held.connection.isClosed
                if old { retired.append(entry.held) }
                return old
            }
            for (key, held) in state.taken where held.connection.isClosed {
                state.taken[key] = nil
                retired.append(held)
            }
            let running = !state.idle.isEmpty || !state.taken.isEmpty
            if !running { state.sweep = nil }
            return (retired, running)
        }
        for held in retired { held.release.resume() }
        return running
    }
}
