import ArgumentParser

/// Which liveness endpoints a benchmark samples during its steps, and the goal they report
/// against (reported only: it does not decide whether a step passes).
struct HealthOptions: ParsableArguments {
    @Option(help: "A /health/live URL to sample during every step, NAME=URL (plain HTTP/1.1; repeatable).")
    var healthUrl: [String] = []
    /// Every 100 ms: the probes' own CPU counts in the server's, and every 25 ms it was 0.6 ms
    /// of `serve` per message at 40 msg/s (see the ParleyCore article on the pipeline's
    /// performance); a starved pool still shows, as it shows in seconds.
    @Option(help: "Milliseconds between two probes of one health URL.") var healthIntervalMs = 100
    @Option(help: "The health goal reported next to the figures: p99 (ms) of each health URL.")
    var healthP99Limit = 100.0

    func validate() throws {
        guard healthIntervalMs >= 1 else { throw ValidationError("health-interval-ms must be positive") }
        _ = try targets()
    }

    func targets() throws -> [HealthTarget] { try healthUrl.map { try HealthTarget(argument: $0) } }

    /// A sampler for the given URLs, or nil when there are none.
    func sampler() throws -> HealthSampler? {
        let targets = try targets()
        guard !targets.isEmpty else { return nil }
        return HealthSampler(targets: targets, interval: .milliseconds(healthIntervalMs))
    }

    /// The line printed for the sustained step, e.g. `/health/live at 4000 msg/s: serve …; p99 within 100 ms`.
    func verdict(_ health: [String: HealthSampler.Summary], rate: Double, unit: String) -> String {
        let over = health.filter { $0.value.latency.p99 > healthP99Limit || $0.value.failures > 0 }.keys.sorted()
        let goal =
            over.isEmpty
            ? "every p99 within \(Int(healthP99Limit)) ms"
            : "OVER the \(Int(healthP99Limit)) ms goal (or failing): \(over.joined(separator: ", "))"
        return "/health/live at \(Int(rate)) \(unit) (highest passing rate): \(HealthSampler.describe(health)); \(goal)"
    }
}
