import Foundation
import Glibc
import ParleyRuntime
import ServiceLifecycle

/// Hands memory the process freed back to the system now and then (glibc's `malloc_trim`).
///
/// glibc keeps what a burst freed in its arenas, for reuse: after a CONTINUATION flood
/// `parley serve` stayed at 380 MiB where it idles at 80, until the next burst reused it.
/// One `malloc_trim(0)` took it back to 70 MiB. It walks every arena under their locks, so it
/// runs on a thread of its own, never on Swift concurrency's few threads, once an interval.
final class MemoryTrimmer: Service, @unchecked Sendable {
    private let interval: Duration
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false

    init(interval: Duration = .seconds(30)) {
        self.interval = interval
    }

    /// Trims once an interval until graceful shutdown.
    func run() async throws {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        Thread.start(named: "parley-trim") { [self] in
            condition.lock()
            while !stopped {
                if !condition.wait(until: Date(timeIntervalSinceNow: seconds)), !stopped {
                    condition.unlock()
                    Self.trimNow()
                    condition.lock()
                }
            }
            condition.unlock()
        }
        try? await gracefulShutdown()
        stop()
    }

    private func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Returns the free memory of every arena to the system; blocks while it walks them.
    static func trimNow() { _ = trim?(0) }

    /// glibc's `malloc_trim`, which Swift's Glibc module does not export (`malloc.h`); nil
    /// where the C library has none.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
