import Foundation

/// Jobs that wait in a queue's keeping until a time, unless their producer releases them sooner.
public protocol ParkedJobs: Sendable {
    /// Keeps `jobs` until `due`, then queues them; parking a job that is still parked moves its time.
    func park(_ jobs: [String], until due: Date) async throws
    /// Queues `jobs` now as one job (each starts with `header`: the job is `header` followed by
    /// the rest of each) and takes their parked copies out of the keeping, atomically: a job
    /// is queued once unless its parked copy went by itself before (its producer was late by
    /// more than the time it parked it for).
    func release(_ jobs: [String], joinedAfter header: String) async throws
}

/// A queue that parks what it is given until `due`: how the relay hands the backstops of its
/// windows' summaries on with its batch's other jobs, before the batch's rows are deleted.
public struct ParkingQueue: JobQueue {
    let parked: any ParkedJobs
    let due: Date

    public init(_ parked: any ParkedJobs, until due: Date) {
        self.parked = parked
        self.due = due
    }

    public func enqueue(_ job: String) async throws { try await parked.park([job], until: due) }

    public func enqueue(contentsOf jobs: [String]) async throws { try await parked.park(jobs, until: due) }
}

/// One member's unread counts in a room, as the room list counts them.
public struct MemberUnread: Sendable, Equatable {
    public let userID: Int64
    public let unread: Int64
    public let mentions: Int64

    public init(userID: Int64, unread: Int64, mentions: Int64) {
        self.userID = userID
        self.unread = unread
        self.mentions = mentions
    }
}

/// What the summaries of a window's end are made of, read in one go.
public struct SummaryRead: Sendable {
    /// A room's newest message when the summary was read.
    public struct Newest: Sendable {
        public let seq: Int64
        /// Nil when retention purged it.
        public let message: Message?

        public init(seq: Int64, message: Message?) {
            self.seq = seq
            self.message = message
        }
    }

    /// Each chunk's readers, ascending, with their counts; a chunk without readers may be absent.
    public var members: [ReaderChunk: [MemberUnread]]
    public var newest: [Int64: Newest]

    public init(members: [ReaderChunk: [MemberUnread]] = [:], newest: [Int64: Newest] = [:]) {
        self.members = members
        self.newest = newest
    }
}

/// Reads what busy rooms' summaries carry (``NotificationSummaryJob``).
public protocol RoomSummaries: Sendable {
    /// For each chunk (one read for all): the room's readers after its `after`, ascending, at
    /// most `limit`, each with their unread counts; and each room's newest message.
    func summaries(of chunks: Set<ReaderChunk>, limit: Int) async throws -> SummaryRead
}

/// The relay's part in holding busy rooms' copies (``NotificationWindows``): its windows, and
/// where each held room's summary is parked as a backstop, in case the relay stops before
/// its window ends (``NotificationSummaryJob``).
public struct NotificationHolding: Sendable {
    public let windows: NotificationWindows
    public let parked: any ParkedJobs
    /// How long after a window should have ended its parked summary goes by itself: longer
    /// than the release can be late, so a live relay's release comes first.
    public let backstopDelay: Duration

    public init(windows: NotificationWindows, parked: any ParkedJobs, backstopDelay: Duration = .seconds(5)) {
        self.windows = windows
        self.parked = parked
        self.backstopDelay = backstopDelay
    }

    /// The backstops to park for rooms whose windows hold messages, as the relay hands them
    /// on with its batch: those of windows not yet parked (the relay marks them parked once
    /// its batch's jobs are handed on: a batch that failed parks them again when read again).
    /// Nil when none is due one.
    public func backstops(of held: [Int64], now: Date = Date()) -> Backstops? {
        let windows = self.windows.unparked(held)
        guard !windows.isEmpty else { return nil }
        return Backstops(
            queue: ParkingQueue(parked, until: now + (self.windows.length + backstopDelay).seconds),
            jobs: windows.map { NotificationSummaryJob(room: $0.room).payload }, windows: windows)
    }

    /// Summaries to park, and the windows to mark parked once they are.
    public struct Backstops: Sendable {
        public let queue: any JobQueue
        public let jobs: [String]
        public let windows: [NotificationWindows.Held]
    }
}
