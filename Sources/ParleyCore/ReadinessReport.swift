import ParleyRuntime

/// The state of every dependency at one moment, as answered by `/health/ready`.
public struct ReadinessReport: Sendable, Equatable {
    public enum Status: String, Sendable, Equatable, Codable {
        case up
        case down
        case timeout
    }

    /// Each dependency's status, keyed by the probe's name.
    public let checks: [String: Status]

    public var isReady: Bool { checks.values.allSatisfy { $0 == .up } }

    /// Names of the dependencies that are not up, sorted for stable output.
    public var failing: [String] { checks.filter { $0.value != .up }.map(\.key).sorted() }

    public init(checks: [String: Status]) { self.checks = checks }

    /// Runs all probes concurrently, each bounded by `timeout`, so one hung dependency can
    /// neither hang readiness nor hide the state of the others.
    public static func evaluate(_ probes: [any DependencyProbe], timeout: Duration) async -> ReadinessReport {
        await withTaskGroup(of: (String, Status).self) { group in
            for probe in probes {
                group.addTask {
                    do {
                        try await withTimeout(timeout) { try await probe.probe() }
                        return (probe.name, .up)
                    } catch is TimeoutError {
                        return (probe.name, .timeout)
                    } catch {
                        return (probe.name, .down)
                    }
                }
            }
            var checks: [String: Status] = [:]
            for await (name, status) in group { checks[name] = status }
            return ReadinessReport(checks: checks)
        }
    }
}
