/// Publishes server events to MQTT topics (QoS 1, with the contract's one-hour expiry).
public protocol EventPublisher: Sendable {
    func publish(topic: String, payload: String) async throws
    /// QoS 0, no expiry: for what is worthless later (typing).
    func publishTransient(topic: String, payload: String) async throws
    /// Publishes events in this order; may overlap their acknowledgements.
    func publish(events: [(topic: String, payload: String)]) async throws
}

extension EventPublisher {
    public func publish(events: [(topic: String, payload: String)]) async throws {
        for event in events { try await publish(topic: event.topic, payload: event.payload) }
    }
}

/// A durable work queue of one job type (at-least-once; handlers must be idempotent).
public protocol JobQueue: Sendable {
    func enqueue(_ job: String) async throws
    /// Adds several jobs, in one round trip where the queue can.
    func enqueue(contentsOf jobs: [String]) async throws
}

extension JobQueue {
    public func enqueue(contentsOf jobs: [String]) async throws {
        for job in jobs { try await enqueue(job) }
    }
}

/// Who can read a room, for fan-out in chunks.
public protocol RoomReaders: Sendable {
    /// For each chunk asked (one query for all): ids of users who can read its room,
    /// ascending, greater than its `after`, at most `limit`. A chunk without readers may be absent.
    func readerIDs(of chunks: Set<ReaderChunk>, limit: Int) async throws -> ChunkReaders
}

/// Readers of chunks, and the version of each room's readers they were read at.
public struct ChunkReaders: Sendable, Equatable {
    public var ids: [ReaderChunk: [Int64]]
    /// Each room's readers version (see ``FanoutJob/readersVersion``), read with `ids`; absent
    /// for a room none of whose readers was read.
    public var versions: [Int64: Int64]

    public init(ids: [ReaderChunk: [Int64]] = [:], versions: [Int64: Int64] = [:]) {
        self.ids = ids
        self.versions = versions
    }
}

/// Where a room's readers are read from: those with an id greater than `after`.
public struct ReaderChunk: Hashable, Sendable {
    public let roomID: Int64
    public let after: Int64

    public init(roomID: Int64, after: Int64) {
        self.roomID = roomID
        self.after = after
    }
}

/// A job that can never succeed (malformed): it goes to the dead letters without retries.
public struct PermanentJobFailure: Error, CustomStringConvertible {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A job to be retried later than the queue's usual back-off (a provider's `Retry-After`).
public struct RetryLater: Error, CustomStringConvertible {
    /// `nil`: the queue's back-off.
    public let after: Duration?
    public let reason: String

    public init(after: Duration?, reason: String) {
        self.after = after
        self.reason = reason
    }

    public var description: String { reason }
}
