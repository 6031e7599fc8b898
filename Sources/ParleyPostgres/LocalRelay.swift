import ParleyCore
import ParleyRuntime
import Synchronization

/// The outbox relay running in this process, as the sends stored here see it: while it holds
/// the relay's lock, a send stored here wakes it directly, and its statement sends no
/// `NOTIFY`, which would wake a PostgreSQL backend and the relay's listening connection for
/// every commit (<doc:MessagePipelinePerformance>). Sends stored while it does not hold the
/// lock notify as every other process's do.
///
/// Such a send also hands its stored messages over, so the relay's next read need not read
/// them back: while nothing but this process's sends committed since its last read (no
/// `NOTIFY` came), the relay reads only the outbox rows and takes their messages from here
/// (<doc:RelayHandOver>).
public final class LocalRelay: Sendable {
    /// What the relay waits on; `NOTIFY`s from other processes signal it too.
    let wake = WakeSignal()
    private let active = Atomic<Bool>(false)
    /// Whether a `NOTIFY` came (or the relay just took the lock) since the relay's last read:
    /// rows then may name messages that were not handed over.
    private let notified = Atomic<Bool>(true)
    /// The messages stored here and not read by the relay yet, by id, with when they came.
    private let handed = Mutex<[Int64: (message: Message, at: ContinuousClock.Instant)]>([:])

    /// The most messages held for the relay: past it, a send hands nothing over and the relay
    /// reads the rows' messages back. At chat rates it holds a commit's worth; a relay held up
    /// (Redis down, say) must not make this grow without bound.
    static let handOverLimit = 1024
    /// A message held this long was read back in full (a read that a `NOTIFY` made full saw
    /// its row before it came): it goes when room is needed.
    static let staleAfter: Duration = .seconds(5)

    public init() {}

    /// Whether this process's relay holds the lock: a send committed here may wake it instead
    /// of notifying.
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Set by the relay when it takes the lock, and before it lets go of it. Either way what was
    /// handed over goes: a relay that takes the lock reads the table in full first.
    func activated(_ isActive: Bool) {
        handed.withLock { $0.removeAll() }
        notified.store(true, ordering: .releasing)
        active.store(isActive, ordering: .releasing)
    }

    /// Tells the relay of a commit that did not notify, handing over the messages it stored.
    func committed(handingOver messages: [Message] = [], at now: ContinuousClock.Instant = .now) {
        if !messages.isEmpty {
            handed.withLock { handed in
                if handed.count + messages.count > Self.handOverLimit {
                    handed = handed.filter { now - $0.value.at < Self.staleAfter }
                    guard handed.count + messages.count <= Self.handOverLimit else { return }
                }
                for message in messages { handed[message.id] = (message, now) }
            }
        }
        wake.signal()
    }

    /// Tells the relay of a `NOTIFY`: another process's commit, or one of this process's that
    /// recorded events other than plain messages.
    func heardNotify() {
        notified.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Whether the relay's next read may take its new messages from here: no `NOTIFY` since the
    /// last read that asked. Asking clears it.
    func mayReadRowsOnly() -> Bool { !notified.exchange(false, ordering: .acquiringAndReleasing) }

    /// The handed-over messages of a read's rows, taken out: `ids` holds each row's message id
    /// in order (nil for a row that needs none), and the answer covers its longest prefix
    /// whose messages are all here, `count` rows long.
    func take(leading ids: [Int64?]) -> (count: Int, messages: [Int64: Message]) {
        handed.withLock { handed in
            var taken: [Int64: Message] = [:]
            var count = 0
            for id in ids {
                if let id {
                    guard let message = handed.removeValue(forKey: id)?.message else { break }
                    taken[id] = message
                }
                count += 1
            }
            return (count, taken)
        }
    }

    /// Drops the handed-over messages of `ids`: the relay read them back in full.
    func discard(_ ids: [Int64]) {
        guard !ids.isEmpty else { return }
        handed.withLock { handed in
            guard !handed.isEmpty else { return }
            for id in ids { handed[id] = nil }
        }
    }
}
