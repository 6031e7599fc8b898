import Foundation
import Synchronization

/// The `Date` header's value (RFC 9110's IMF-fixdate), formatted once a second.
///
/// Hummingbird's own cache of it is internal to `Application`; Parley's HTTP/2 streams
/// answer without `Application`'s wrapper (see <doc:LeanHTTP2Streams>) and keep their own.
final class HTTPDateHeader: Sendable {
    private let current = Mutex<(second: Int, text: String)>((-1, ""))

    /// Now, to the second.
    var value: String {
        let second = Int(Date().timeIntervalSince1970)
        return current.withLock { current in
            if current.second != second { current = (second, Self.format(second)) }
            return current.text
        }
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for a count of seconds since 1970.
    static func format(_ second: Int) -> String {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = weekdays[(second / 86_400) % 7]
        return "\(weekday), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
