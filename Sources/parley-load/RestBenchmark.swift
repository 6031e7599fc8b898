import ArgumentParser
import Foundation
import NIOHTTP1

/// `parley-load rest`: authenticated `GET /v1/rooms` and `POST /v1/rooms/{id}/messages` over
/// HTTP/2, stepping the offered rate like the chat benchmark; the baseline is `/health/live`
/// of the same server through the same clients.
struct RestBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rest", abstract: "Requests/s of the REST API over HTTP/2, against /health/live.")

    @OptionGroup var target: TargetOptions
    @Option(help: "Users, each with its own HTTP/2 connection (in two-party rooms).") var users = 40
    @Option(help: "Offered rates to step through for the reads, requests/s.")
    var rates = "250,500,1000,1500,2000,3000,4000,5000,6000,8000,10000"
    @Option(help: "Offered rates for the message sends (each one a stored, relayed and fanned-out message).")
    var sendRates = "50,100,150,200,300,400,500,600,800,1000,1250,1500,2000,2500,3000"
    @Option(help: "Rooms in each user's list (two-party rooms with the users around it on a ring; even).")
    var roomsPerUser = 20
    @Option(help: "Seconds each rate is offered.") var stepSeconds = 5
    @Option(help: "The latency goal: a step with a higher p99 (ms) ends the ladder.") var p99Limit = 50.0

    func validate() throws {
        guard users >= 2, users % 2 == 0, stepSeconds >= 1 else {
            throw ValidationError("users must be even and at least 2; step-seconds positive")
        }
        guard roomsPerUser >= 2, roomsPerUser % 2 == 0, roomsPerUser < users else {
            throw ValidationError("rooms-per-user must be even, at least 2 and below the number of users")
        }
    }

    func run() async throws {
        let rates = try RateLadder.parse(self.rates)
        let sendRates = try RateLadder.parse(self.sendRates)
        let tag = BenchUsers.newTag()
        let setup = ParleyRESTClient(baseURL: target.api, caFile: target.caFile)
        print("rest: setting up \(users) users in \(users / 2) two-party rooms...")
        let accounts = try await BenchUsers.create(users, tag: tag, api: setup)
        let rooms = try await BenchRooms.create(
            users: accounts, members: 2, rooms: users / 2, tag: tag, api: setup)
        print("rest: giving each user \(roomsPerUser) rooms, each with a message...")
        try await BenchRooms.ring(users: accounts, reach: roomsPerUser / 2, tag: tag, api: setup)
        await setup.shutdown()
        let clients = accounts.map { _ in ParleyRESTClient(baseURL: target.api, caFile: target.caFile) }
        let ladder = RateLadder(
            rates: rates, stepDuration: .seconds(stepSeconds), p99Limit: p99Limit,
            cpu: try ProcessCPU(watch: target.watch), requests: try ServerRequests(count: target.countRequests))

        func measure(
            _ label: String, rates: [Double]? = nil, _ request: @escaping @Sendable (Int, Int) -> Request
        ) async throws -> Measurement {
            print("\(label):")
            // Connections and caches warm up before the ladder, outside its figures.
            let first = rates?.first ?? ladder.rates[0]
            _ = try await offer(rate: min(first, 200), seconds: 2, clients: clients, request)
            return try await ladder.climb(label: label, unit: "req/s", rates: rates) { rate, _ in
                try await offer(rate: rate, seconds: stepSeconds, clients: clients, request)
            }
        }
        let health = try await measure("GET /health/live") { _, _ in Request(.GET, "/health/live", expect: 200) }
        let list = try await measure("GET /v1/rooms") { _, user in
            Request(.GET, "/v1/rooms?limit=\(roomsPerUser)", token: accounts[user].login.accessToken, expect: 200)
        }
        let send = try await measure("POST /v1/rooms/{id}/messages", rates: sendRates) { index, user in
            let body = #"{"content":"REST load message","uid":"r\#(tag)-\#(index)-\#(Clock.nanoseconds())"}"#
            return Request(
                .POST, "/v1/rooms/\(rooms[user / 2].id)/messages", token: accounts[user].login.accessToken,
                body: Data(body.utf8), expect: 201)
        }
        for client in clients { await client.shutdown() }

        let notes = [
            "\(users) users, one HTTP/2 connection each (TLS, ALPN h2); open-loop rate over all of them",
            "GET /v1/rooms?limit=\(roomsPerUser): each user's whole list of \(roomsPerUser) two-party rooms, each with"
                + " a message (until 2026-11-30 each user had one room)",
            "latency: intended send time to the complete answer",
        ]
        for (name, title, subject) in [
            ("rest-rooms", "REST: GET /v1/rooms", list), ("rest-messages", "REST: POST /v1/rooms/{id}/messages", send),
        ] {
            let result = ScenarioResult(
                scenario: name, title: title, subject: subject, baseline: health,
                notes: notes + ["ratio: requests/s within the goal over GET /health/live's"])
            try result.write(to: target.outputDirectory(name))
            print("\(title): ratio \(result.ratio.map { String(format: "%.3f", $0) } ?? "-") against /health/live")
        }
    }

    /// One request of the benchmark.
    struct Request: Sendable {
        let method: HTTPMethod
        let path: String
        var token: String? = nil
        var body: Data? = nil
        let expect: Int

        init(_ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil, expect: Int) {
            self.method = method
            self.path = path
            self.token = token
            self.body = body
            self.expect = expect
        }
    }

    private func offer(
        rate: Double, seconds: Int, clients: [ParleyRESTClient],
        _ request: @escaping @Sendable (Int, Int) -> Request
    ) async throws -> RateLadder.Outcome {
        let recorder = LatencyRecorder()
        let sent = await OpenLoop.run(rate: rate, duration: .seconds(seconds)) { index, intended in
            let user = index % clients.count
            let request = request(index, user)
            do {
                let (status, _) = try await clients[user].send(
                    request.method, request.path, token: request.token, body: request.body)
                if status == request.expect {
                    recorder.record(sinceIntended: intended)
                } else {
                    recorder.recordFailure()
                }
            } catch {
                recorder.recordFailure()
            }
        }
        return RateLadder.Outcome(
            expected: sent, completed: Int(recorder.count), errors: recorder.failureCount, latency: recorder.summary())
    }
}

extension TargetOptions {
    /// `<output>/<name>.json` when `--output` names a directory; `--output` itself otherwise.
    func outputDirectory(_ name: String) -> String? {
        guard let output else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory), isDirectory.boolValue {
            return "\(output)/\(name).json"
        }
        return output
    }
}
