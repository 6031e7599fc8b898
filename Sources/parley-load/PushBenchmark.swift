import ArgumentParser
import Crypto
import Foundation
import NIOCore
import ParleyCore
import ParleyPush
import ParleyPushSimulator

/// `parley-load push`: pushes per second through ``APNsSender`` to the APNs-protocol
/// simulator with added latency, against a baseline of bare HTTP/2 POSTs of the same
/// requests over the same kind of client, in the same process.
struct PushBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Pushes/s to a local APNs-protocol server with added latency.")

    @Option(help: "TLS certificate (PEM) for the local server; also trusted by the client.")
    var certificate: String
    @Option(help: "TLS private key (PEM) of the certificate.")
    var key: String
    @Option(help: "Pushes per run.")
    var pushes = 5000
    @Option(help: "Pushes in flight at once (HTTP/2 streams).")
    var concurrency = 100
    @Option(help: "Latency the server adds to every answer, in milliseconds.")
    var latency = 30
    @Option(help: "Rounds of each, alternating; the median round is reported.")
    var rounds = 3

    func validate() throws {
        guard pushes > 0, concurrency > 0, latency >= 0, rounds > 0 else {
            throw ValidationError("pushes, concurrency and rounds must be positive; latency not negative")
        }
    }

    func run() async throws {
        let apnsKey = P256.Signing.PrivateKey()
        let simulator = try await BenchAPNs.simulator(
            certificate: certificate, key: key, signingKey: apnsKey.publicKey, latency: .milliseconds(latency))
        defer { Task { await simulator.stop() } }
        let client = try PushHTTPClient(caFile: certificate)
        let sender = APNsSender(
            configuration: APNsConfiguration(
                key: apnsKey, keyID: BenchAPNs.keyID, teamID: BenchAPNs.teamID, topic: BenchAPNs.topic,
                baseURL: simulator.baseURL),
            client: client)
        let jobs = (0..<pushes).map { index in
            PushJob(
                deviceID: Int64(index), userID: Int64(index), provider: .apns,
                token: String(format: "%064x", index),
                notification: PushNotification(
                    reason: .message, roomID: 1, roomUID: "bench-room", title: "Bench room",
                    body: "Ada: message \(index)", actorID: 0, messageID: Int64(index), seq: Int64(index), badge: 1))
        }

        // Warm-up: the TLS handshake and the provider token are not part of the figures.
        _ = try await sender.send(jobs[0])
        // Alternating rounds, so drift of a shared machine touches both sides alike.
        var baselines: [Figures] = []
        var parleys: [Figures] = []
        for _ in 0..<rounds {
            baselines.append(
                try await Self.baseline(
                    jobs: jobs, concurrency: concurrency, simulator: simulator, certificate: certificate, key: apnsKey))
            parleys.append(try await Self.measure(jobs: jobs, concurrency: concurrency) { try await sender.send($0) })
        }
        try await client.shutdown()
        let baseline = Self.median(baselines)
        let parley = Self.median(parleys)

        let ceiling = Double(concurrency) / (Double(latency) / 1000)
        print(
            "push benchmark: \(pushes) pushes, \(concurrency) in flight, \(latency) ms server latency, "
                + "median of \(rounds) alternating rounds")
        print(String(format: "  ceiling (in flight / latency)   %10.0f pushes/s", ceiling))
        print(String(format: "  baseline: bare HTTP/2 POSTs      %10.0f pushes/s", baseline.rate))
        print(String(format: "  parley: APNsSender               %10.0f pushes/s", parley.rate))
        print(String(format: "  ratio parley / baseline          %10.2f", parley.rate / baseline.rate))
        print("  failures: baseline \(baseline.failures), parley \(parley.failures)")
    }

    struct Figures {
        let rate: Double
        let failures: Int
    }

    static func median(_ rounds: [Figures]) -> Figures {
        rounds.sorted { $0.rate < $1.rate }[rounds.count / 2]
    }

    static func measure(
        jobs: [PushJob], concurrency: Int, send: @escaping @Sendable (PushJob) async throws -> PushOutcome
    ) async throws -> Figures {
        let start = ContinuousClock.now
        let failures = await withTaskGroup(of: Bool.self) { group in
            var pending = jobs.makeIterator()
            var failures = 0
            for _ in 0..<concurrency {
                guard let job = pending.next() else { break }
                group.addTask { (try? await send(job)) == .delivered }
            }
            for await delivered in group {
                if !delivered { failures += 1 }
                if let job = pending.next() { group.addTask { (try? await send(job)) == .delivered } }
            }
            return failures
        }
        let seconds =
            Double(start.duration(to: .now).components.attoseconds) / 1e18
            + Double(start.duration(to: .now).components.seconds)
        return Figures(rate: Double(jobs.count) / seconds, failures: failures)
    }

    /// The same requests with a precomputed token and body: what HTTP/2 alone costs.
    static func baseline(
        jobs: [PushJob], concurrency: Int, simulator: PushSimulator, certificate: String, key: P256.Signing.PrivateKey
    ) async throws -> Figures {
        let bare = try BareAPNsClient(baseURL: simulator.baseURL, certificate: certificate, key: key)
        let body = ByteBuffer(string: #"{"aps":{"alert":{"title":"Bench room","body":"Ada: message"},"badge":1}}"#)
        let figures = try await measure(jobs: jobs, concurrency: concurrency) { job in
            let status = try await bare.post(deviceToken: job.token, body: body)
            return status == 200 ? .delivered : .rejected(reason: "\(status)")
        }
        try await bare.shutdown()
        return figures
    }
}
