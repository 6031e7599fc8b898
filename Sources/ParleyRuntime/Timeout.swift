import Synchronization

/// Thrown by ``withTimeout(_:operation:)`` when the operation did not finish in time.
public struct TimeoutError: Error, Sendable, CustomStringConvertible {
    public let duration: Duration
    public init(duration: Duration) { self.duration = duration }
    public var description: String { "timed out after \(duration)" }
}

/// Runs `operation`, throwing ``TimeoutError`` when it takes longer than `duration`.
///
/// The caller gets its answer at the deadline even if the operation ignores cancellation
/// (a client library stuck waiting for a dead server): the operation is cancelled and left
/// to finish on its own, rather than awaited as a task group would.
public func withTimeout<Result: Sendable>(
    _ duration: Duration,
    operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withAbandonment(
        when: { abandon in
            // A deadline, not a sleeping task: this bounds every statement (see ``Deadlines``).
            let deadline = Deadlines.shared.after(duration) { abandon(TimeoutError(duration: duration)) }
            return { Deadlines.shared.cancel(deadline) }
        }, operation: operation)
}

/// Runs `operation` until it finishes or `watch` reports a reason to give up on it first,
/// whichever comes first; on giving up, the operation is cancelled and left to finish on its
/// own (it may never: a client library waiting for an answer that cannot come).
///
/// - Parameter watch: starts watching; calls `abandon` with the error to throw, and returns
///   what stops the watching once the race is decided (or nil).
public func withAbandonment<Result: Sendable>(
    when watch: @Sendable (_ abandon: @escaping @Sendable (any Error) -> Void) -> (@Sendable () -> Void)?,
    operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let outcome = OneShot<Result>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.install(continuation)
            let work = Task {
                do { outcome.resume(with: .success(try await operation())) } catch {
                    outcome.resume(with: .failure(error))
                }
            }
            let stopWatching = watch { error in outcome.resume(with: .failure(error)) }
            outcome.onResume {
                work.cancel()
                stopWatching?()
            }
        }
    } onCancel: {
        outcome.resume(with: .failure(CancellationError()))
    }
}

/// A continuation resumed by whichever of several racers finishes first.
private final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var early: Swift.Result<Value, any Error>?
        var cleanup: (@Sendable () -> Void)?
        var resumed = false
    }
    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        let early: Swift.Result<Value, any Error>? = state.withLock { state in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onResume(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            if state.resumed { return true }
            state.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    func resume(with result: Swift.Result<Value, any Error>) {
        let (continuation, cleanup): (CheckedContinuation<Value, any Error>?, (@Sendable () -> Void)?) =
            state.withLock { state in
                guard !state.resumed else { return (nil, nil) }
                state.resumed = true
                guard let continuation = state.continuation else {
                    state.early = result
                    return (nil, state.cleanup)
                }
                state.continuation = nil
                return (continuation, state.cleanup)
            }
        continuation?.resume(with: result)
        cleanup?()
    }
}
