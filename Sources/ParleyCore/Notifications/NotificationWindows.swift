import Synchronization

/// Which new messages are copied to the members' notification topics at once, and which wait
/// for their room's window to end (`PARLEY_NOTIFICATION_WINDOW_MILLISECONDS`).
///
/// A room's first message after a quiet window goes at once and opens a window. Messages in
/// the window are held; when it ends with any held, the room is due a summary
/// (``NotificationSummaryJob``: its newest message and each member's unread counts, read
/// then) and the next window opens at once. A window that ends with nothing held closes. A
/// busy room so sends each member at most one copy per window, a quiet one a copy per message.
///
/// The relay that publishes keeps them, as it sees every new message in commit order. A
/// held message is committed before the relay holds it, and its summary is read from the
/// database after its window ended, so the summary carries it. A relay that takes over starts
/// with no window open: its first copies go at once.
public final class NotificationWindows: Sendable {
    /// What becomes of one new message's copies.
    public enum Admission: Sendable, Equatable {
        /// Copy it to the members now.
        case now
        /// The window's summary carries it.
        case held
    }

    public typealias Instant = ContinuousClock.Instant

    public let length: Duration

    private struct Window {
        var end: Instant
        var held: Bool
        /// Its summary's backstop is parked (``NotificationHolding``).
        var parked = false
    }

    /// A room's window, as the relay parks its summary's backstop: marked parked only while it
    /// is still the room's window.
    public struct Held: Sendable, Equatable {
        public let room: Int64
        let end: Instant
    }

    private struct State {
        var windows: [Int64: Window] = [:]
        /// Rooms in the order their windows end (every window is as long, so in the order they
        /// opened), each with the end it had then: an entry whose room's window changed since
        /// is stale. Entries before `head` are taken.
        var ends: [(room: Int64, end: Instant)] = []
        var head = 0

        mutating func open(_ room: Int64, at now: Instant, length: Duration) {
            let end = now + length
            windows[room] = Window(end: end, held: false)
            ends.append((room, end))
        }

        mutating func takeFirst() -> (room: Int64, end: Instant) {
            let first = ends[head]
            head += 1
            // Compacted once the taken part is most of the array, so it stays within twice
            // the rooms in a window.
            if head > 1024, head * 2 > ends.count {
                ends.removeFirst(head)
                head = 0
            }
            return first
        }
    }

    private let state = Mutex(State())

    public init(length: Duration) {
        self.length = length
    }

    /// Whether a new message of `room`, seen at `now`, is copied now or held.
    public func admit(room: Int64, at now: Instant) -> Admission {
        state.withLock { state in
            if var window = state.windows[room] {
                // Past its end but not yet taken by `due(at:)`: its summary, still to be read,
                // carries this message too.
                if window.held { return .held }
                if now < window.end {
                    window.held = true
                    state.windows[room] = window
                    return .held
                }
            }
            state.open(room, at: now, length: length)
            return .now
        }
    }

    /// The rooms whose windows ended by `now` with messages held: each is due its summary,
    /// and its next window opens at `now`. Windows that ended with nothing held close.
    public func due(at now: Instant) -> [Int64] {
        state.withLock { state in
            var rooms: [Int64] = []
            while state.head < state.ends.count, state.ends[state.head].end <= now {
                let (room, end) = state.takeFirst()
                guard let window = state.windows[room], window.end == end else { continue }
                if window.held {
                    rooms.append(room)
                    state.open(room, at: now, length: length)
                } else {
                    state.windows[room] = nil
                }
            }
            return rooms
        }
    }

    /// The windows of `rooms` that hold messages and whose summaries are not parked yet.
    public func unparked(_ rooms: [Int64]) -> [Held] {
        state.withLock { state in
            rooms.compactMap { room in
                state.windows[room].flatMap { $0.held && !$0.parked ? Held(room: room, end: $0.end) : nil }
            }
        }
    }

    /// Notes that the summaries of `windows` are parked; a window that ended since is not the
    /// room's window any more, and its successor is not marked.
    public func markParked(_ windows: [Held]) {
        state.withLock { state in
            for window in windows where state.windows[window.room]?.end == window.end {
                state.windows[window.room]?.parked = true
            }
        }
    }

    /// When the next window ends, if any is open.
    public var nextEnd: Instant? {
        state.withLock { $0.head < $0.ends.count ? $0.ends[$0.head].end : nil }
    }

    /// Rooms with a window open.
    public var openCount: Int { state.withLock { $0.windows.count } }
}
