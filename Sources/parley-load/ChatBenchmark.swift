import ArgumentParser
import Foundation
import ParleyCore
import ParleyMQTT

/// `parley-load chat`: the end-to-end message pipeline. Members publish on `chat-in`, Parley
/// stores each message and the other members receive its canonical event on the room topic;
/// the offered rate steps up until p99 passes the goal. The baseline is the same generator
/// through a plugin-less mosquitto that relays publishes directly (no storage).
struct ChatBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Messages/s through chat-in → storage → room topic, against a plain relay.")

    @OptionGroup var target: TargetOptions
    @OptionGroup var health: HealthOptions
    @Option(
        help: "Port of a plugin-less mosquitto for the baseline (anonymous; the same host); not with --skip-baseline.")
    var baselinePort: Int?
    @Option(help: "Members per room.") var members = 2
    @Option(help: "Rooms; senders take turns over all rooms.") var rooms = 50
    @Option(help: "Offered rates to step through, messages/s.")
    var rates = "250,500,1000,1500,2000,3000,4000,5000,6000,8000,10000,12000,15000,20000"
    @Option(help: "Seconds each rate is offered.") var stepSeconds = 5
    @Option(help: "The latency goal: a step with a higher p99 (ms) ends the ladder.") var p99Limit = 50.0
    @Option(help: "Extra processes whose CPU the baseline reports, NAME=PID.") var baselineWatch: [String] = []
    @Flag(help: "Only Parley's side (for profiling); no baseline, no ratio.") var skipBaseline = false
    @Option(help: "The scenario's name in results (default: chat-MEMBERS).") var scenario: String?
    @Option(help: "What the title adds to the shape (the message hook on).") var variant: String?

    func validate() throws {
        guard members >= 2, rooms >= 1, stepSeconds >= 1 else {
            throw ValidationError("members must be at least 2, rooms and step-seconds positive")
        }
        guard skipBaseline || baselinePort != nil else {
            throw ValidationError("--baseline-port is needed unless --skip-baseline")
        }
    }

    func run() async throws {
        let rates = try RateLadder.parse(self.rates)
        let tag = BenchUsers.newTag()
        let api = ParleyRESTClient(baseURL: target.api, caFile: target.caFile)
        print("chat: \(rooms) rooms of \(members) members; setting up \(rooms * members) users...")
        let users = try await BenchUsers.create(rooms * members, tag: tag, api: api)
        let roomList = try await BenchRooms.create(users: users, members: members, rooms: rooms, tag: tag, api: api)
        await api.shutdown()

        let plan = RoomPlan(members: members, rooms: roomList)
        // A recorder per step: the warm-up, then every step the ladder may offer.
        let steps = 1 + RateLadder.maximumSteps(rates: rates.count)
        let stepDuration = Duration.seconds(stepSeconds)
        let unit = "msg/s"
        // One side's clients at a time, so each side is measured without the other's idle
        // connections and threads.
        var base = Measurement(label: "baseline", unit: unit, p99Limit: p99Limit, steps: [])
        if !skipBaseline, let baselinePort {
            let baselineClients = try await ChatClients(
                host: target.mqttHost, port: baselinePort,
                credentials: users.map { ("load-\(tag)-\($0.index)", nil, nil) },
                topics: users.map { [Topic.room(plan.room(of: $0.index).uid)] }, steps: steps)
            let baseline = RateLadder(
                rates: rates, stepDuration: stepDuration, p99Limit: p99Limit, cpu: try ProcessCPU(watch: baselineWatch))
            print("baseline: plugin-less mosquitto relaying chat-room publishes")
            try await plan.warmUp(rate: rates[0], clients: baselineClients, direct: true)
            base = try await baseline.climb(label: "baseline", unit: unit) { rate, index in
                try await plan.step(
                    rate: rate, step: index + 1, duration: stepDuration, clients: baselineClients, direct: true)
            }
            await baselineClients.shutdown()
        }
        let parleyClients = try await ChatClients(
            host: target.mqttHost, port: target.mqttPort,
            credentials: users.map { ($0.login.mqtt.clientId, $0.login.mqtt.username, $0.login.mqtt.password) },
            topics: users.map { [Topic.room(plan.room(of: $0.index).uid), Topic.notifications($0.id)] },
            steps: steps)
        let sampler = try health.sampler()
        let parley = RateLadder(
            rates: rates, stepDuration: stepDuration, p99Limit: p99Limit, cpu: try ProcessCPU(watch: target.watch),
            health: sampler, requests: try ServerRequests(count: target.countRequests))
        print("parley: chat-in -> ingest -> PostgreSQL -> outbox -> room topic")
        let subject: Measurement
        do {
            try await plan.warmUp(rate: rates[0], clients: parleyClients, direct: false)
            subject = try await parley.climb(label: "parley", unit: unit) { rate, index in
                try await plan.step(
                    rate: rate, step: index + 1, duration: stepDuration, clients: parleyClients, direct: false)
            }
        } catch {
            await sampler?.shutdown()
            throw error
        }
        await sampler?.shutdown()
        await parleyClients.shutdown()
        let name = scenario ?? "chat-\(members)"
        let result = ScenarioResult(
            scenario: name,
            title: "Chat pipeline, rooms of \(members) (\(rooms) rooms)" + (variant.map { ", \($0)" } ?? ""),
            subject: subject, baseline: base,
            notes: [
                "latency: intended send time to the canonical event at every other member (open loop)",
                "a step passes with p99 <= \(p99Limit) ms and every message delivered; a step that misses "
                    + "only p99, by less than half of it, is offered once more and the second try decides",
                "ratio: Parley's sustained messages/s over the plain relay's (higher is better)",
            ] + healthNotes(sampler))
        try result.write(to: target.outputDirectory(name))
        print(
            "\(name): parley \(Int(subject.best?.achievedRate ?? 0)) msg/s, baseline "
                + "\(Int(base.best?.achievedRate ?? 0)) msg/s, ratio \(result.ratio.map { String(format: "%.3f", $0) } ?? "-")"
        )
        if let best = subject.best, let healthAtBest = result.healthAtBest {
            print("\(name): " + health.verdict(healthAtBest, rate: best.offeredRate, unit: unit))
        }
    }

    private func healthNotes(_ sampler: HealthSampler?) -> [String] {
        guard let sampler else { return [] }
        return [
            "/health/live of \(sampler.targets.map(\.name).joined(separator: " and ")) probed every "
                + "\(health.healthIntervalMs) ms during each step, one kept-alive HTTP/1.1 connection each; latency "
                + "from each probe's due time (goal: p99 <= \(Int(health.healthP99Limit)) ms; reported, not a pass rule)"
        ]
    }
}

/// Who is in which room, and how one rate step is offered and counted.
struct RoomPlan: Sendable {
    let members: Int
    let rooms: [API.Room]

    func room(of user: Int) -> API.Room { rooms[user / members] }

    /// Warms connections, statements and caches up outside the figures (recorder 0), with at
    /// least one message from every member: with 1,000 rooms, 2 s at 200 messages/s left 600
    /// rooms cold for the first measured step, whose p99 then measured cold starts; one
    /// message per room (and 200 more) still left 800 of 2,000 members' first publish to the
    /// ladder, and each first publish on a topic is a look-up that the broker's plugin waits
    /// for on the broker's one thread (chat-many's 500 step then had p99 1.6 s with 500 such
    /// publishes in it).
    ///
    /// - Parameter rate: the ladder's first rate (the warm-up offers 50 to 200/s).
    func warmUp(rate: Double, clients: ChatClients, direct: Bool) async throws {
        let warmRate = Self.warmRate(ladderStart: rate)
        let warmSeconds = Self.warmSeconds(senders: rooms.count * members, rate: warmRate)
        _ = await offer(rate: warmRate, step: 0, duration: .seconds(warmSeconds), clients: clients, direct: direct)
        try await Task.sleep(for: .seconds(1))
    }

    /// The ladder's first rate, within 50 to 200 messages/s: a slower warm-up of a room of 100
    /// (whose first rate is 5/s) would take 40 s to hear from every member.
    static func warmRate(ladderStart rate: Double) -> Double { min(max(rate, 50), 200) }

    /// Long enough for `senders` messages at `rate` (``sender(at:rooms:members:)`` takes every
    /// member of every room in turn), and at least 2 s.
    static func warmSeconds(senders: Int, rate: Double) -> Int {
        max(2, Int((Double(senders) / rate).rounded(.up)) + 1)
    }

    /// The room and sender of a step's message `index`: every room in turn, each time the next
    /// of its members, so any `rooms × members` consecutive messages come from every member once.
    static func sender(at index: Int, rooms: Int, members: Int) -> (room: Int, sender: Int) {
        let room = index % rooms
        return (room, room * members + (index / rooms) % members)
    }

    /// Offers `rate` for `duration`, then waits (up to 5 s) for the deliveries.
    ///
    /// - Parameter direct: publish the finished event on the room topic (the baseline relay)
    ///   instead of client input on `chat-in`.
    func step(rate: Double, step: Int, duration: Duration, clients: ChatClients, direct: Bool) async throws
        -> RateLadder.Outcome
    {
        let sent = await offer(rate: rate, step: step, duration: duration, clients: clients, direct: direct)
        let recorder = clients.recorders[step]
        let expected = sent * (members - 1)
        let deadline = Clock.nanoseconds() + 5_000_000_000
        while recorder.count < UInt64(expected), Clock.nanoseconds() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Lets the queues behind the room topic (fan-out, pushes) settle before the next step.
        try await Task.sleep(for: .seconds(1))
        return RateLadder.Outcome(
            expected: sent, completed: Int(recorder.count) / (members - 1), errors: recorder.failureCount,
            latency: recorder.summary())
    }

    private func offer(rate: Double, step: Int, duration: Duration, clients: ChatClients, direct: Bool) async -> Int {
        let recorder = clients.recorders[step]
        return await OpenLoop.run(rate: rate, duration: duration) { index, intended in
            let (room, sender) = Self.sender(at: index, rooms: rooms.count, members: members)
            let uid = SendStamp.uid(step: step, sender: sender, intended: intended, index: index)
            let payload =
                direct ? Self.event(room: rooms[room], sender: sender, uid: uid) : Self.input(rooms[room], uid)
            do {
                // QoS 1 as apps publish; the proof of delivery is the event coming back.
                try clients.clients[sender].publishWithoutWaiting(
                    topic: direct ? Topic.room(rooms[room].uid) : Topic.chatIn(rooms[room].uid), payload: payload,
                    qos: 1)
            } catch {
                recorder.recordFailure()
            }
        }
    }

    static let content = "Load test message: the quick brown fox jumps over the lazy dog."

    /// What a client publishes on `chat-in`.
    static func input(_ room: API.Room, _ uid: String) -> [UInt8] {
        Array(
            #"{"type":"new-message-notification","data":{"chatRoomId":\#(room.id),"content":"\#(content)","uid":"\#(uid)"},"hash":"\#(uid)"}"#
                .utf8)
    }

    /// An event shaped like Parley's canonical one, for the relay baseline.
    static func event(room: API.Room, sender: Int, uid: String) -> [UInt8] {
        Array(
            #"{"data":{"chatRoomId":\#(room.id),"chatRoomUid":"\#(room.uid)","content":"\#(content)","createdAt":"2026-11-22T05:00:00.000Z","id":1,"sentById":\#(sender),"seq":1,"uid":"\#(uid)"},"hash":"0123456789abcdef0123456789abcdef","type":"new-message-notification"}"#
                .utf8)
    }
}

/// Where Parley runs and what to report.
struct TargetOptions: ParsableArguments {
    @Option(help: "Parley's public HTTPS URL.") var api = "https://localhost:8443"
    @Option(help: "CA certificate (PEM) of the server's certificate.") var caFile: String?
    @Option(help: "MQTT broker host (with Parley's plugin).") var mqttHost = "127.0.0.1"
    @Option(help: "MQTT broker port (plain TCP on loopback).") var mqttPort = 1883
    @Option(help: "Processes whose CPU time is reported, NAME=PID (descendants included).")
    var watch: [String] = []
    @Option(help: "Servers whose requests received per operation are reported, NAME=PORT (their listening port).")
    var countRequests: [String] = []
    @Option(help: "Write the JSON result here (a directory: one NAME.json per scenario).") var output: String?
}
