/// The part of `Cache-Control` (RFC 9111) a key document's lifetime is read from.
public enum CacheControl {
    /// `max-age` in seconds from the header's values (several fields or comma-separated);
    /// `no-store`, `no-cache` and a missing or malformed `max-age` say nothing (nil), and
    /// the reader keeps the keys for its least time.
    public static func maxAge(_ values: [String]) -> Duration? {
        var maxAge: Duration?
        for directive in values.flatMap({ $0.split(separator: ",") }) {
            let parts = directive.split(separator: "=", maxSplits: 1)
            let name = parts.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            switch name {
            case "no-store", "no-cache":
                return nil
            case "max-age" where parts.count == 2:
                let value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\""])
                guard let seconds = Int64(value), seconds >= 0 else { return nil }
                maxAge = .seconds(seconds)
            default:
                continue
            }
        }
        return maxAge
    }
}
