import Foundation

/// HTTP dates (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`): `Last-Modified`,
/// `If-Modified-Since`, `If-Range`, `Retry-After`.
public enum HTTPDate {
    public static func format(_ date: Date) -> String {
        formatter().string(from: date)
    }

    /// The moment, or nil when the text is not an IMF-fixdate.
    public static func parse(_ text: String) -> Date? {
        formatter().date(from: text.trimmingCharacters(in: .whitespaces))
    }

    /// Whole seconds since 1970, as validators compare them.
    public static func seconds(_ text: String) -> Int64? {
        parse(text).map { Int64($0.timeIntervalSince1970) }
    }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
