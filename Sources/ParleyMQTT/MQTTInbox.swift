import Synchronization

/// The messages a client received and no route took, in order, until its consumer reads them
/// (``MQTTClient/messages``).
///
/// Bounded with back-pressure: once `capacity` wait unread, the network loop stops reading
/// the socket, so TCP's window fills and the broker holds the rest (in the session's queue,
/// as for any slow subscriber) instead of this process growing without limit. Reading
/// resumes when the consumer has taken it down to half.
public final class MQTTInbox: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage

    let capacity: Int
    private let state = Mutex(State())
    /// Called when reading may resume (the network loop's wake-up).
    private let resume: @Sendable () -> Void

    private struct State {
        var messages = Queue()
        var waiter: CheckedContinuation<MQTTMessage?, Never>?
        var finished = false
        var paused = false
    }

    init(capacity: Int, resume: @escaping @Sendable () -> Void) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.resume = resume
    }

    /// Whether the network loop should leave the socket unread for now.
    var isFull: Bool { state.withLock { $0.paused } }

    /// Messages waiting to be read.
    public var count: Int { state.withLock { $0.messages.count } }

    func append(_ message: MQTTMessage) {
        let waiter = state.withLock { state -> CheckedContinuation<MQTTMessage?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.messages.append(message)
            if state.messages.count >= capacity { state.paused = true }
            return nil
        }
        waiter?.resume(returning: message)
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<MQTTMessage?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next message; nil once the client shut down and everything was read, or when the
    /// reading task is cancelled (as an `AsyncStream` ends its loop). One reader.
    func next() async -> MQTTMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (ready, resumeReading) = state.withLock { state -> (MQTTMessage??, Bool) in
                    if Task.isCancelled { return (.some(nil), false) }
                    if let message = state.messages.popFirst() {
                        let resumeReading = state.paused && state.messages.count <= capacity / 2
                        if resumeReading { state.paused = false }
                        return (.some(message), resumeReading)
                    }
                    if state.finished { return (.some(nil), false) }
                    state.waiter = continuation
                    return (nil, false)
                }
                if resumeReading { resume() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<MQTTMessage?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: MQTTInbox
        public mutating func next() async -> MQTTMessage? { await inbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: self) }

    /// First in, first out, each step O(1) amortised: read messages are dropped in bulk.
    struct Queue {
        private var storage: [MQTTMessage] = []
        private var head = 0

        var count: Int { storage.count - head }

        mutating func append(_ message: MQTTMessage) { storage.append(message) }

        mutating func popFirst() -> MQTTMessage? {
            guard head < storage.count else { return nil }
            let message = storage[head]
            head += 1
            if head >= 1024 && head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
            return message
        }
    }
}
