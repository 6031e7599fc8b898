import Foundation

/// A liveness endpoint sampled while a benchmark runs, given as `NAME=URL`
/// (`serve=http://127.0.0.1:9090/health/live`): plain HTTP/1.1, any 2xx answer counts as live.
struct HealthTarget: Sendable, Equatable {
    let name: String
    let url: String

    init(name: String, url: String) {
        self.name = name
        self.url = url
    }

    /// Parses `NAME=URL`; the URL must be absolute `http://` or `https://`.
    init(argument: String) throws {
        let parts = argument.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty,
            let url = URL(string: String(parts[1])), ["http", "https"].contains(url.scheme ?? ""),
            url.host?.isEmpty == false
        else {
            throw LoadError("--health-url takes NAME=http://HOST:PORT/PATH, not \(argument)")
        }
        self.init(name: String(parts[0]), url: String(parts[1]))
    }
}
