import ArgumentParser
import Crypto
import Foundation
import Logging
import NIOCore
import ParleyCore
import ParleyMQTT
import ParleyPushSimulator
import Synchronization

/// `parley-load fanout`: one message into a room of many members; the time until every
/// member's notification is on the broker and every push reached the (local) APNs server.
/// The baseline is the same notifications published by one plain client to a plugin-less
/// mosquitto and the same pushes POSTed bare to the same APNs server, at the worker's push
/// concurrency.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout", abstract: "Time from one message to all notifications and pushes of a large room.")

    @OptionGroup var target: TargetOptions
    @Option(help: "Members of the room (each with an iOS device).") var members = 1000
    @Option(help: "Messages sent one after another; the median time is reported.") var rounds = 5
    @Option(help: "Parley's MQTT identity (subscribes to every notification topic).") var serverUsername =
        "parley-server"
    @Option(help: "Password of that identity.") var serverPassword: String
    @Option(help: "Port of a plugin-less mosquitto for the baseline.") var baselinePort: Int
    @Option(help: "Port the local APNs server listens on (the worker's PARLEY_APNS_URL).") var pushPort: Int
    @Option(help: "TLS certificate (PEM) of the local APNs server.") var pushCertificate: String
    @Option(help: "Its private key (PEM).") var pushKey: String
    @Option(help: "The APNs signing key (.p8) the worker uses; its public half verifies the tokens.")
    var apnsKey: String
    @Option(help: "Pushes in flight in the baseline (the worker's PARLEY_PUSH_CONCURRENCY).") var pushConcurrency = 64

    func run() async throws {
        let signingKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOfFile: apnsKey, encoding: .utf8))
        let simulator = try await BenchAPNs.simulator(
            certificate: pushCertificate, key: pushKey, signingKey: signingKey.publicKey, port: pushPort)
        let tag = BenchUsers.newTag()
        let api = ParleyRESTClient(baseURL: target.api, caFile: target.caFile)
        print("fanout: setting up \(members) users with devices and their room...")
        let users = try await BenchUsers.create(members, tag: tag, api: api, withPushTokens: true)
        let observer = try await NotificationObserver(
            host: target.mqttHost, port: target.mqttPort, username: serverUsername, password: serverPassword)
        let room = try await api.call(
            .POST, "/v1/rooms", token: users[0].login.accessToken,
            json: [
                "name": "Fan-out \(tag)", "members": users.dropFirst().map { ["userId": $0.id, "role": "writer"] },
                "firstMessage": ["content": "Welcome", "uid": "welcome-\(tag)"],
            ], as: API.Room.self)
        // The room's creation pushes and notifies everyone once: let that settle first.
        try await simulator.waitUntilQuiet()
        let cpu = try ProcessCPU(watch: target.watch)

        var parleyTimes: [Double] = []
        var parleyCPU: [[String: Double]] = []
        for round in 0..<rounds {
            simulator.clear()
            let uid = "fan-\(tag)-\(round)"
            observer.expect(marker: uid)
            let before = cpu.sample()
            let start = Clock.nanoseconds()
            _ = try await api.call(
                .POST, "/v1/rooms/\(room.id)/messages", token: users[0].login.accessToken,
                json: ["content": "Hello all \(round)", "uid": uid], expected: [201], as: API.Identified.self)
            let notified = try await observer.waitFor(count: members, since: start)
            let pushed = try await simulator.waitFor(count: members - 1, since: start)
            let seconds = Double(max(notified, pushed) - start) / 1e9
            parleyTimes.append(seconds)
            parleyCPU.append(ProcessCPU.perOperation(from: before, to: cpu.sample(), operations: 1))
            print(
                String(
                    format: "  parley round %d: notifications %.3f s, pushes %.3f s", round,
                    Double(notified - start) / 1e9, Double(pushed - start) / 1e9))
            try await Task.sleep(for: .milliseconds(500))
        }
        await api.shutdown()
        await observer.shutdown()

        let baseline = try await Self.baseline(
            members: members, rounds: rounds, port: baselinePort, host: target.mqttHost, simulator: simulator,
            certificate: pushCertificate, key: signingKey, concurrency: pushConcurrency)
        await simulator.stop()

        let subject = Self.median(parleyTimes)
        let base = Self.median(baseline)
        let result = ScenarioResult(
            scenario: "fanout", title: "Fan-out: one message to a \(members.formatted())-member room",
            subject: Measurement(
                label: "parley (outbox, fan-out, push role)", unit: "s", value: subject,
                cpuSecondsPerOperation: parleyCPU[parleyTimes.firstIndex(of: subject) ?? 0]),
            baseline: Measurement(label: "bare MQTT publishes and HTTP/2 POSTs", unit: "s", value: base),
            ratio: base / subject,
            notes: [
                "time from POST /v1/rooms/{id}/messages to the last of \(members) notifications on the broker and "
                    + "\(members - 1) pushes at a local APNs-protocol server (answers at once); median of \(rounds)",
                "baseline: one client publishes the same \(members) notifications to plugin-less mosquitto while "
                    + "the same pushes are POSTed bare, \(pushConcurrency) in flight",
                "ratio: baseline time over Parley's (higher is better); CPU: per whole fan-out of the room",
            ])
        try result.write(to: target.outputDirectory("fanout"))
        print(String(format: "fanout: parley %.3f s, baseline %.3f s, ratio %.2f", subject, base, base / subject))
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// The raw transport cost of the same work, in the same process.
    static func baseline(
        members: Int, rounds: Int, port: Int, host: String, simulator: PushSimulator, certificate: String,
        key: P256.Signing.PrivateKey, concurrency: Int
    ) async throws -> [Double] {
        let observer = try await NotificationObserver(host: host, port: port, username: nil, password: nil)
        let publisher = try MQTTClient(
            configuration: MQTTConfiguration(host: host, port: port, clientID: "fanout-baseline"),
            logger: Logger(label: "parley-load.mqtt", factory: { _ in SwiftLogNoOpLogHandler() }))
        try publisher.start()
        try await publisher.waitUntilConnected(timeout: .seconds(10))
        let pushes = try BareAPNsClient(baseURL: simulator.baseURL, certificate: certificate, key: key)
        let body = ByteBuffer(string: #"{"aps":{"alert":{"title":"Fan-out","body":"Ada: hello all"},"badge":1}}"#)
        var times: [Double] = []
        for round in 0..<rounds {
            simulator.clear()
            let marker = "base-\(round)-\(Clock.nanoseconds())"
            observer.expect(marker: marker)
            let event = Array(RoomPlan.event(room: API.Room(id: 1, uid: "fanout-baseline"), sender: 1, uid: marker))
            let start = Clock.nanoseconds()
            async let published: Void = publisher.publish(
                batch: (0..<members).map { (Topic.notifications(Int64($0 + 1)), event) })
            async let posted: Void = pushes.send(count: members - 1, concurrency: concurrency, body: body)
            _ = try await (published, posted)
            let notified = try await observer.waitFor(count: members, since: start)
            let pushed = try await simulator.waitFor(count: members - 1, since: start)
            times.append(Double(max(notified, pushed) - start) / 1e9)
            print(String(format: "  baseline round %d: %.3f s", round, times.last!))
        }
        await publisher.shutdown()
        await observer.shutdown()
        try await pushes.shutdown()
        return times
    }
}

/// Subscribes to every user's notification topic and notes when each copy of one message
/// (found by a marker in its payload) arrived.
final class NotificationObserver: Sendable {
    let client: MQTTClient
    private let arrivals = Arrivals()
    private let consumer: Task<Void, Never>

    /// The marker looked for and when each copy carrying it arrived.
    final class Arrivals: Sendable {
        let state = Mutex<(marker: String, times: [UInt64])>(("", []))
    }

    init(host: String, port: Int, username: String?, password: String?) async throws {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: host, port: port, username: username, password: password,
                clientID: "parley-load-observer-\(Clock.nanoseconds())"),
            logger: Logger(label: "parley-load.mqtt", factory: { _ in SwiftLogNoOpLogHandler() }))
        try client.start()
        self.client = client
        let arrivals = self.arrivals
        consumer = Task {
            for await message in client.messages {
                let now = Clock.nanoseconds()
                let payload = String(decoding: message.payload, as: UTF8.self)
                arrivals.state.withLock { state in
                    if !state.marker.isEmpty, payload.contains(state.marker) { state.times.append(now) }
                }
            }
        }
        try await client.waitUntilConnected(timeout: .seconds(10))
        try await client.subscribe(Topic.notificationsPrefix + "+", qos: 1)
    }

    func expect(marker: String) { arrivals.state.withLock { $0 = (marker, []) } }

    /// When the `count`-th copy arrived (waits up to 60 s).
    func waitFor(count: Int, since start: UInt64) async throws -> UInt64 {
        let deadline = start + 60_000_000_000
        while Clock.nanoseconds() < deadline {
            if let last = arrivals.state.withLock({ $0.times.count >= count ? $0.times.max() : nil }) { return last }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw LoadError("only \(arrivals.state.withLock { $0.times.count }) of \(count) notifications arrived in 60 s")
    }

    func shutdown() async {
        await client.shutdown()
        consumer.cancel()
    }
}

extension PushSimulator {
    /// When the `count`-th push since `start` arrived (waits up to 60 s).
    func waitFor(count: Int, since start: UInt64) async throws -> UInt64 {
        let deadline = start + 60_000_000_000
        while Clock.nanoseconds() < deadline {
            let received = self.received
            if received.count >= count, let last = received.map(\.receivedAt).max() {
                // From the simulator's clock to this program's: how long ago it arrived.
                let ago = last.duration(to: .now)
                let agoNanoseconds =
                    UInt64(ago.components.seconds) * 1_000_000_000
                    + UInt64(ago.components.attoseconds / 1_000_000_000)
                return Clock.nanoseconds() - agoNanoseconds
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw LoadError("only \(received.count) of \(count) pushes arrived in 60 s")
    }

    /// Returns once no push has arrived for two seconds.
    func waitUntilQuiet() async throws {
        var seen = -1
        while received.count != seen {
            seen = received.count
            try await Task.sleep(for: .seconds(2))
        }
    }
}
