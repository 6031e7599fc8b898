import Foundation

/// The fan-out jobs of one relay batch, in commit order, as one queue entry.
///
/// The event bytes the relay published pass to every copy as they are (an event is
/// serialised once: when its change is stored, or for a new message by the relay from the
/// stored row). Each job is a ``FanoutJob`` (its `event` empty when it is the row's own
/// event), then the row's event, each preceded by its length in UTF-8 bytes:
///
///     fanout-batch\n
///     <bytes>\n<fanout job JSON>\n<bytes>\n<event>\n   (once per job)
///
/// A queue entry that starts with `{` is one ``FanoutJob`` (continuations of large rooms,
/// and jobs queued before batches existed).
public enum FanoutBatch {
    static let marker = "fanout-batch\n"

    /// One job as the relay read it: the outbox's `fanout` and `event` columns (or, for a new
    /// message, what the relay made of the stored row).
    public struct Entry: Sendable {
        /// Where the job came from: the outbox's `fanout` column as it was stored, or the relay,
        /// which made it of a new message's row.
        private enum Source: Sendable {
            case stored(String)
            case made(FanoutJob)
        }

        private let source: Source
        public let event: String?

        /// The job's JSON. A job the relay made is encoded only when it goes to the queue:
        /// most of a busy relay's jobs are planned into copies (``FanoutPlanner``) and never are.
        public var job: String {
            switch source {
            case .stored(let json): json
            case .made(let job): job.json()
            }
        }

        /// The job as the relay made it, when it did (a new message's): what ``FanoutPlanner``
        /// reads, without decoding `job`.
        public var made: FanoutJob? {
            guard case .made(let job) = source else { return nil }
            return job
        }

        /// A job read as JSON, with its event.
        public init(job: String, event: String?) {
            self.source = .stored(job)
            self.event = event
        }

        /// A job the relay made, with the event it published.
        public init(_ job: FanoutJob, event: String?) {
            self.source = .made(job)
            self.event = event
        }

        /// The entry with its job continuing the trace `traceparent` (the relay's span, when it
        /// made one); a job the relay did not make keeps what it carries.
        public func continuing(_ traceparent: String?) -> Entry {
            guard var job = made, let traceparent, traceparent != job.traceparent else { return self }
            job.traceparent = traceparent
            return Entry(job, event: event)
        }
    }

    public static func encode(_ entries: [Entry]) -> String {
        var text = marker
        for entry in entries {
            for part in [entry.job, entry.event ?? ""] {
                text += "\(part.utf8.count)\n"
                text += part
                text += "\n"
            }
        }
        return text
    }

    /// The jobs of a queue entry, each with its event resolved.
    public static func decode(_ payload: String) throws -> [FanoutJob] {
        guard payload.hasPrefix(marker) else { return [try job(payload, rowEvent: nil)] }
        var rest = Substring(payload).utf8.dropFirst(marker.utf8.count)
        var jobs: [FanoutJob] = []
        while !rest.isEmpty {
            let header = try part(of: &rest)
            let event = try part(of: &rest)
            jobs.append(try job(header, rowEvent: event))
        }
        return jobs
    }

    /// Takes `<bytes>\n<bytes of text>\n` off the front of `rest`.
    private static func part(of rest: inout Substring.UTF8View) throws -> String {
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")),
            let count = Int(String(decoding: rest[..<newline], as: UTF8.self)), count >= 0,
            rest.distance(from: newline, to: rest.endIndex) > count + 1
        else { throw FanoutBatchError() }
        let start = rest.index(after: newline)
        let end = rest.index(start, offsetBy: count)
        guard rest[end] == UInt8(ascii: "\n") else { throw FanoutBatchError() }
        let text = String(decoding: rest[start..<end], as: UTF8.self)
        rest = rest[rest.index(after: end)...]
        return text
    }

    private static func job(_ header: String, rowEvent: String?) throws -> FanoutJob {
        guard let job = try? JSONCoding.decoder.decode(FanoutJob.self, from: Data(header.utf8)) else {
            throw FanoutBatchError()
        }
        guard job.event.isEmpty, let rowEvent, !rowEvent.isEmpty else { return job }
        return job.with(event: rowEvent)
    }
}

/// A queue entry that is neither a fan-out job nor a batch of them.
public struct FanoutBatchError: Error {}

/// What the relay does with its batch's fan-out: the copies it can publish itself, with the
/// batch's own events, and the jobs left for the `fanout` role's queue.
public protocol FanoutPlanner: Sendable {
    func plan(_ entries: [FanoutBatch.Entry]) -> FanoutPlan
}

public struct FanoutPlan: Sendable {
    /// Copies to publish after the batch's events, in this order.
    public var copies: [(topic: String, payload: String)]
    /// Queued as one job (``FanoutBatch``).
    public var queued: [FanoutBatch.Entry]

    public init(copies: [(topic: String, payload: String)] = [], queued: [FanoutBatch.Entry] = []) {
        self.copies = copies
        self.queued = queued
    }
}
