import Dispatch
import Histogram
import Synchronization

/// Latencies of one measurement in an HDR histogram (microseconds, 3 significant digits, up
/// to one minute), recorded from any thread.
final class LatencyRecorder: Sendable {
    private let histogram = Mutex(Histogram<UInt64>(highestTrackableValue: 60_000_000))
    private let failures = Atomic<Int>(0)

    /// Records the time from `intended` (the open-loop schedule's send time, so a stalled
    /// sender cannot hide its own delay) until now.
    func record(sinceIntended intended: UInt64, now: UInt64 = Clock.nanoseconds()) {
        let micros = now > intended ? (now - intended) / 1000 : 0
        histogram.withLock { _ = $0.record(min(micros, 60_000_000)) }
    }

    func recordFailure() { failures.add(1, ordering: .relaxed) }

    var count: UInt64 { histogram.withLock { $0.totalCount } }
    var failureCount: Int { failures.load(ordering: .relaxed) }

    /// p50, p99, p99.9 and max in milliseconds.
    func summary() -> LatencySummary {
        histogram.withLock { histogram in
            func millis(_ micros: UInt64) -> Double { Double(micros) / 1000 }
            return LatencySummary(
                count: Int(histogram.totalCount), p50: millis(histogram.valueAtPercentile(50)),
                p99: millis(histogram.valueAtPercentile(99)), p999: millis(histogram.valueAtPercentile(99.9)),
                max: millis(histogram.max))
        }
    }
}

/// Percentiles of a latency histogram, in milliseconds.
struct LatencySummary: Codable, Sendable {
    var count: Int
    var p50: Double
    var p99: Double
    var p999: Double
    var max: Double
}

/// One monotonic clock for every process-local timestamp (send times travel inside payloads).
enum Clock {
    static func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
