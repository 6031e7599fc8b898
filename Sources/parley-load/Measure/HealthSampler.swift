import AsyncHTTPClient
import Foundation
import NIOCore

/// Samples liveness endpoints (``HealthTarget``) while a benchmark step runs, each over its own
/// kept-alive HTTP/1.1 connection, and summarises their latencies per step. A server whose
/// thread pool is starved answers `/health/live` in seconds instead of milliseconds.
///
/// Everything here is asynchronous (AsyncHTTPClient on NIO's event loops): sampling never
/// holds a Swift concurrency thread while it waits.
final class HealthSampler: Sendable {
    let targets: [HealthTarget]
    let interval: Duration
    private let http: HTTPClient

    init(targets: [HealthTarget], interval: Duration) {
        self.targets = targets
        self.interval = interval
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .http1Only
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        configuration.timeout.connect = .seconds(5)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// One target's probes during one step.
    struct Summary: Codable, Sendable {
        /// Milliseconds from each probe's due time to its answer.
        var latency: LatencySummary
        /// Probes that got no 2xx answer (refused, timed out, another status).
        var failures: Int
    }

    /// Runs `body` while every target is probed; the probes stop when it returns or throws.
    ///
    /// - Returns: what `body` returned, and each target's probes by name.
    func sampling<Value: Sendable>(during body: () async throws -> Value) async throws -> (
        Value, [String: Summary]
    ) {
        let recorders = targets.map { _ in LatencyRecorder() }
        let probes = Task {
            await withTaskGroup(of: Void.self) { group in
                for (target, recorder) in zip(targets, recorders) {
                    group.addTask {
                        await HealthProbe.run(every: self.interval, into: recorder) { try await self.get(target) }
                    }
                }
            }
        }
        func stop() async -> [String: Summary] {
            probes.cancel()
            await probes.value
            let summaries = recorders.map { Summary(latency: $0.summary(), failures: $0.failureCount) }
            return Dictionary(zip(targets.map(\.name), summaries)) { first, _ in first }
        }
        let result: Value
        do {
            result = try await body()
        } catch {
            _ = await stop()
            throw error
        }
        return (result, await stop())
    }

    /// One probe: true when the target answers 2xx.
    private func get(_ target: HealthTarget) async throws -> Bool {
        let response = try await http.execute(HTTPClientRequest(url: target.url), timeout: .seconds(30))
        // Reads the (small) body so the connection can carry the next probe.
        _ = try await response.body.collect(upTo: 64 * 1024)
        return (200..<300).contains(response.status.code)
    }

    /// `serve 0.31/0.92/4.10, worker 0.28/0.80/2.00 ms p50/p99/max`, by name; failures when any.
    static func describe(_ health: [String: Summary]) -> String {
        func fixed(_ value: Double) -> String { String(format: "%.2f", value) }
        let parts = health.sorted { $0.key < $1.key }.map { name, summary in
            let latency = summary.latency
            let failed = summary.failures > 0 ? " (\(summary.failures) failed)" : ""
            return "\(name) \(fixed(latency.p50))/\(fixed(latency.p99))/\(fixed(latency.max))\(failed)"
        }
        return parts.joined(separator: ", ") + " ms p50/p99/max"
    }
}
