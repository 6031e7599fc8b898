import ParleyRuntime
import Synchronization

/// The outbox relay running in this process, as the sends stored here see it: while it holds
/// the relay's lock, a send stored here wakes it directly, and its statement sends no
/// `NOTIFY`, which would wake a PostgreSQL backend and the relay's listening connection for
/// every commit (<doc:MessagePipelinePerformance>). Sends stored while it does not hold the
/// lock notify as every other process's do.
public final class LocalRelay: Sendable {
    /// What the relay waits on; `NOTIFY`s from other processes signal it too.
    let wake = WakeSignal()
    private let active = Atomic<Bool>(false)

    public init() {}

    /// Whether this process's relay holds the lock: a send committed here may wake it instead
    /// of notifying.
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Set by the relay when it takes the lock, and before it lets go of it.
    func activated(_ isActive: Bool) { active.store(isActive, ordering: .releasing) }

    /// Tells the relay of a commit that did not notify.
    func committed() { wake.signal() }
}
