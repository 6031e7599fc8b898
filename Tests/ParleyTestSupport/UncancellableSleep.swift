import Dispatch

/// Waits without honouring cancellation and without occupying a thread: stands in for a
/// client library that keeps waiting on a dead server after its task was cancelled.
public func uncancellableSleep(seconds: Double) async {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.resume() }
    }
}
