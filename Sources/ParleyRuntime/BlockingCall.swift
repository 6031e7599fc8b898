import Foundation

/// Runs a blocking call — `waitpid`, a pipe read, a thread join — on a thread of its own.
///
/// On Linux, Swift concurrency's executor and `DispatchQueue.global()` share libdispatch's
/// pool of about one thread per core, growing by about a thread a second while threads are
/// blocked: three blocked calls there delay every task of the process by a second. A short-
/// lived thread per call costs tens of microseconds and holds nothing shared.
/// See <doc:BlockingCalls>.
public enum BlockingCall {
    /// Runs `work` on a new thread named `name` and returns its result.
    public static func run<Result: Sendable>(
        _ name: String, _ work: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            Thread.start(named: name) { continuation.resume(returning: work()) }
        }
    }
}
