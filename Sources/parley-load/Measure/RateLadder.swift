import Foundation

/// Steps the offered rate up until the latency goal or delivery fails, and keeps every step:
/// the highest passing step is the sustained figure.
struct RateLadder: Sendable {
    let rates: [Double]
    let stepDuration: Duration
    /// A step passes when p99 stays at or under this, in milliseconds, and nothing was lost.
    let p99Limit: Double
    let cpu: ProcessCPU
    /// Liveness endpoints probed during every step (none when nil).
    var health: HealthSampler?
    /// Servers whose requests received per operation each step reports (none when nil).
    var requests: ServerRequests?

    /// What one step produced.
    struct Outcome: Sendable {
        /// Operations that should have completed (messages offered, requests sent).
        var expected: Int
        var completed: Int
        var errors: Int
        var latency: LatencySummary
    }

    /// Halvings of the gap between the last passing rate and the failing one.
    static let refinements = 2
    /// Halvings of a first rate that fails.
    static let stepsDown = 3

    /// Offers each rate in turn until a step fails, then narrows the gap between the last
    /// passing rate and the failing one by halving it `refinements` times. When the first
    /// rate already fails, halves it (up to `stepsDown` times) to find one that passes, so
    /// a busy machine gives a low figure rather than none.
    ///
    /// A step that misses only the latency goal, and by less than half again, is offered once
    /// more and the second try decides: on a machine the generator shares, one stall in a
    /// step of a few seconds had ended whole ladders (p99 50.08 ms against 50 at a rate the
    /// run before had held four times over). Every side's ladder follows the same rule.
    ///
    /// - Parameter rates: instead of the ladder's own (none skips this side).
    func climb(
        label: String, unit: String, rates: [Double]? = nil, refinements: Int = Self.refinements,
        stepsDown: Int = Self.stepsDown,
        step: (_ rate: Double, _ index: Int) async throws -> Outcome
    ) async throws -> Measurement {
        var steps: [StepResult] = []
        var passing: Double?
        var failing: Double?
        /// Offers `rate` (twice on a near miss) and moves the bound it falls on; true when it passed.
        func offer(_ rate: Double) async throws -> Bool {
            var result = try await measure(rate: rate, index: steps.count, label: label, unit: unit, step: step)
            steps.append(result)
            if nearMiss(result) {
                print("  \(label): a near miss, offered once more")
                result = try await measure(rate: rate, index: steps.count, label: label, unit: unit, step: step)
                steps.append(result)
            }
            if result.passed { passing = rate } else { failing = rate }
            return result.passed
        }
        for rate in rates ?? self.rates {
            guard try await offer(rate) else { break }
        }
        for _ in 0..<stepsDown {
            guard passing == nil, let high = failing, high >= 2 else { break }
            _ = try await offer((high / 2).rounded())
        }
        for _ in 0..<refinements {
            guard let low = passing, let high = failing, high - low > low * 0.05 else { break }
            _ = try await offer(((low + high) / 2).rounded())
        }
        return Measurement(label: label, unit: unit, p99Limit: p99Limit, steps: steps)
    }

    /// Everything delivered, without errors, and p99 over the goal by less than half of it.
    private func nearMiss(_ result: StepResult) -> Bool {
        !result.passed && result.errors == 0 && result.completed >= result.expected
            && result.latency.p99 < p99Limit * 1.5
    }

    /// The most steps ``climb(label:unit:rates:refinements:stepsDown:step:)`` may measure over
    /// `rates` (each offered rate may be offered twice): a benchmark keeps a recorder per step.
    static func maximumSteps(rates: Int, refinements: Int = Self.refinements, stepsDown: Int = Self.stepsDown) -> Int {
        (rates + refinements + stepsDown) * 2
    }

    private func measure(
        rate: Double, index: Int, label: String, unit: String,
        step: (_ rate: Double, _ index: Int) async throws -> Outcome
    ) async throws -> StepResult {
        let requestsBefore = await requests?.sample()
        let before = cpu.sample()
        let started = Clock.nanoseconds()
        let (outcome, health) = try await sampleHealth { try await step(rate, index) }
        let elapsed = Double(Clock.nanoseconds() - started) / 1e9
        let cpuAfter = cpu.sample()
        let requestsAfter = await requests?.sample()
        let result = StepResult(
            offeredRate: rate, achievedRate: Double(outcome.completed) / seconds(stepDuration),
            expected: outcome.expected, completed: outcome.completed, errors: outcome.errors,
            latency: outcome.latency,
            cpuSecondsPerOperation: ProcessCPU.perOperation(from: before, to: cpuAfter, operations: outcome.completed),
            passed: outcome.errors == 0 && outcome.completed >= outcome.expected && outcome.latency.p99 <= p99Limit,
            health: health,
            requestsPerOperation: requestsBefore.flatMap { start in
                requestsAfter.map {
                    ProcessCPU.perOperation(
                        from: [:], to: ServerRequests.received(from: start, to: $0), operations: outcome.completed)
                }
            })
        let lost = max(0, outcome.expected - outcome.completed)
        print(
            "  \(label): \(fixed(rate, 0)) \(unit) offered, \(fixed(result.achievedRate, 0)) achieved; "
                + "p50 \(fixed(result.latency.p50)) p99 \(fixed(result.latency.p99)) "
                + "p99.9 \(fixed(result.latency.p999)) ms; lost \(lost), errors \(outcome.errors) "
                + "(\(fixed(elapsed, 1)) s)\(result.passed ? "" : " <- over the goal")")
        if let health { print("    /health/live: \(HealthSampler.describe(health))") }
        if !result.cpuSecondsPerOperation.isEmpty {
            let costs = result.cpuSecondsPerOperation.sorted { $0.value > $1.value }
                .map { "\($0.key) \(fixed($0.value * 1e6, 0))" }
            print("    CPU µs per operation: \(costs.joined(separator: ", "))")
        }
        if let perOperation = result.requestsPerOperation, !perOperation.isEmpty {
            let counts = perOperation.sorted { $0.key < $1.key }.map { "\($0.key) \(fixed($0.value, 1))" }
            print("    requests received per operation: \(counts.joined(separator: ", "))")
        }
        return result
    }

    /// Runs the step with ``health`` probing alongside, when there is one.
    private func sampleHealth(_ step: () async throws -> Outcome) async throws -> (
        Outcome, [String: HealthSampler.Summary]?
    ) {
        guard let health else { return (try await step(), nil) }
        return try await health.sampling(during: step)
    }

    private func fixed(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `a,b,c` → rates.
    static func parse(_ list: String) throws -> [Double] {
        let rates = list.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !rates.isEmpty, rates.allSatisfy({ $0 > 0 }) else { throw LoadError("rates must be positive numbers") }
        return rates
    }
}

/// One offered rate and what came of it.
struct StepResult: Codable, Sendable {
    var offeredRate: Double
    var achievedRate: Double
    var expected: Int
    var completed: Int
    var errors: Int
    var latency: LatencySummary
    var cpuSecondsPerOperation: [String: Double]
    var passed: Bool
    /// `/health/live` of each sampled process during the step, by name.
    var health: [String: HealthSampler.Summary]?
    /// Requests (round trips) each counted server received per completed operation.
    var requestsPerOperation: [String: Double]?
}

/// One side (Parley or its baseline): a rate ladder, whose ``best`` step is its sustained
/// figure, or a single value (a time, a size).
struct Measurement: Codable, Sendable {
    var label: String
    var unit: String
    var p99Limit: Double?
    var steps: [StepResult]?
    var value: Double?
    var cpuSecondsPerOperation: [String: Double]?

    init(label: String, unit: String, p99Limit: Double, steps: [StepResult]) {
        self.label = label
        self.unit = unit
        self.p99Limit = p99Limit
        self.steps = steps
    }

    init(label: String, unit: String, value: Double, cpuSecondsPerOperation: [String: Double]? = nil) {
        self.label = label
        self.unit = unit
        self.value = value
        self.cpuSecondsPerOperation = cpuSecondsPerOperation
    }

    var best: StepResult? { steps?.filter(\.passed).max { $0.achievedRate < $1.achievedRate } }
}

/// A scenario's JSON result: Parley, its baseline in the same run, and their ratio.
struct ScenarioResult: Codable, Sendable {
    var scenario: String
    var title: String
    var subject: Measurement
    var baseline: Measurement
    /// Parley's sustained figure over the baseline's.
    var ratio: Double?
    /// The sampled `/health/live` latencies at Parley's sustained figure (its best step).
    var healthAtBest: [String: HealthSampler.Summary]?
    var notes: [String]

    init(scenario: String, title: String, subject: Measurement, baseline: Measurement, notes: [String] = []) {
        self.scenario = scenario
        self.title = title
        self.subject = subject
        self.baseline = baseline
        self.notes = notes
        if let parley = subject.best?.achievedRate, let base = baseline.best?.achievedRate, base > 0 {
            ratio = parley / base
        }
        healthAtBest = subject.best?.health
    }

    /// - Parameter ratio: for single values, defined by the scenario (its notes say how).
    init(scenario: String, title: String, subject: Measurement, baseline: Measurement, ratio: Double, notes: [String]) {
        self.scenario = scenario
        self.title = title
        self.subject = subject
        self.baseline = baseline
        self.ratio = ratio
        self.notes = notes
    }

    func write(to path: String?) throws {
        guard let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
