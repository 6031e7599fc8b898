import ServiceLifecycle
import Synchronization

/// Coalesces rising values per key (how far a member has received a room): the first value of
/// a quiet key is written at once, later ones at most once per ``interval``, and the highest
/// one seen is always written in the end (the trailing value is never lost while the process
/// runs). Due values are written together, one `write` per pass; a failed write is tried again
/// a second later with whatever rose meanwhile. Shutdown writes what is pending.
public final class Coalescer<Key: Hashable & Sendable>: Service, Sendable {
    public typealias Write = @Sendable ([(key: Key, value: Int64)]) async throws -> Void

    private struct Entry {
        var pending: Int64?
        var lastWrite: ContinuousClock.Instant?
    }

    public let interval: Duration
    let write: Write
    let onFailure: @Sendable (any Error) -> Void
    private let entries = Mutex<[Key: Entry]>([:])
    private let wake = WakeSignal()

    public init(
        interval: Duration = .seconds(1), onFailure: @escaping @Sendable (any Error) -> Void = { _ in },
        write: @escaping Write
    ) {
        self.interval = interval
        self.onFailure = onFailure
        self.write = write
    }

    /// Keeps `value` for `key` if it is the highest yet; wakes the writer when it may go now.
    public func submit(_ key: Key, _ value: Int64) {
        let now = ContinuousClock.now
        let due = entries.withLock { entries -> Bool in
            var entry = entries[key, default: Entry()]
            entry.pending = max(entry.pending ?? value, value)
            entries[key] = entry
            return entry.lastWrite.map { now - $0 >= interval } ?? true
        }
        if due { wake.signal() }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let wait = await pass(now: .now)
            await wake.wait(upTo: wait)
        }
        _ = await pass(now: .now + interval * 1000)
    }

    /// Writes what is due at `now`; how long until something else may be.
    @discardableResult
    func pass(now: ContinuousClock.Instant) async -> Duration {
        let due = take(now: now)
        if !due.isEmpty {
            do {
                try await write(due)
            } catch {
                onFailure(error)
                // Back as pending (a higher value that came meanwhile wins), tried in a second.
                entries.withLock { entries in
                    for (key, value) in due {
                        var entry = entries[key, default: Entry()]
                        entry.pending = max(entry.pending ?? value, value)
                        entries[key] = entry
                    }
                }
                return .seconds(1)
            }
        }
        return entries.withLock { entries in
            entries.values.compactMap { entry -> Duration? in
                guard entry.pending != nil, let last = entry.lastWrite else { return nil }
                return max(.zero, last + interval - ContinuousClock.now)
            }.min() ?? .seconds(1)
        }
    }

    /// The pending values that may be written at `now`, marked written; keys quiet for a whole
    /// interval are forgotten (memory follows the keys in use).
    private func take(now: ContinuousClock.Instant) -> [(key: Key, value: Int64)] {
        entries.withLock { entries in
            var due: [(key: Key, value: Int64)] = []
            for (key, entry) in entries {
                if let value = entry.pending, entry.lastWrite.map({ now - $0 >= interval }) ?? true {
                    due.append((key, value))
                    entries[key] = Entry(pending: nil, lastWrite: now)
                } else if entry.pending == nil, let last = entry.lastWrite, now - last >= interval {
                    entries[key] = nil
                }
            }
            return due
        }
    }
}
