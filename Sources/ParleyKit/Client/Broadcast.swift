import Foundation
import NIOConcurrencyHelpers

/// Hands each value to every stream made from it that wants it, while that stream lasts.
final class Broadcast<Value: Sendable>: Sendable {
    private struct Listener {
        let continuation: AsyncStream<Value>.Continuation
        let wants: @Sendable (Value) -> Bool
    }

    // NIO's lock rather than Synchronization's Mutex: ParleyKit runs on iOS 16 and macOS 13.
    private let listeners = NIOLockedValueBox<[UUID: Listener]>([:])

    /// The values sent from now on that `wants` lets through; a slow reader keeps the newest `buffer`.
    func stream(buffer: Int = 1_000, where wants: @escaping @Sendable (Value) -> Bool = { _ in true })
        -> AsyncStream<Value>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(buffer))
        let id = UUID()
        listeners.withLockedValue { $0[id] = Listener(continuation: continuation, wants: wants) }
        continuation.onTermination = { [weak self] _ in
            self?.listeners.withLockedValue { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ value: Value) {
        for listener in listeners.withLockedValue({ Array($0.values) }) where listener.wants(value) {
            listener.continuation.yield(value)
        }
    }

    /// Ends every stream.
    func finish() {
        for listener in listeners.withLockedValue({ Array($0.values) }) { listener.continuation.finish() }
    }
}
