/// One room's new messages put in `seq` order, each told once, whichever way it came (the
/// room topic, the notification topic, the history fetched to fill a gap).
///
/// `seq` rises by one per message in commit order and the room topic delivers in that order,
/// so a message beyond the next seq means one was missed (a reconnect, an expired queue): it
/// is held until the history fills the gap. A seq the history no longer has (a retention
/// purge) is skipped once a complete fetch has passed it.
struct RoomTimeline: Sendable {
    /// The highest seq told (or, at the start, the history's newest).
    private(set) var told: Int
    private var held: [Int: ParleyMessage] = [:]

    init(told: Int) { self.told = told }

    /// Whether a held message waits for one missed before it.
    var hasGap: Bool { !held.isEmpty }

    /// The newest held seq, if any.
    var newestHeld: Int? { held.keys.max() }

    /// Takes a message that arrived; returns what may be told now, in order.
    mutating func take(_ message: ParleyMessage) -> [ParleyMessage] {
        guard message.seq > told else { return [] }
        held[message.seq] = message
        return drain()
    }

    /// Takes a complete fetch of the history after ``told`` (as it stood once every held
    /// message up to `mark` had arrived): a seq it lacks up to `mark` is no more, and what is
    /// held up to there is told.
    mutating func fill(with history: [ParleyMessage], through mark: Int) -> [ParleyMessage] {
        for message in history where message.seq > told { held[message.seq] = message }
        var ready = drain()
        while let next = held.keys.filter({ $0 <= mark }).min() {
            told = next - 1
            ready += drain()
        }
        return ready
    }

    private mutating func drain() -> [ParleyMessage] {
        var ready: [ParleyMessage] = []
        while let next = held.removeValue(forKey: told + 1) {
            ready.append(next)
            told += 1
        }
        for seq in held.keys where seq <= told { held[seq] = nil }
        return ready
    }
}
