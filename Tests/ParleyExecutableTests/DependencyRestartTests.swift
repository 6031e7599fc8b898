import Foundation
import ParleyCore
import ParleyPostgres
import ParleyRuntime
import ParleyTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import ParleyAPI

#if canImport(Glibc)
    import Glibc
#endif

/// `parley serve` and `parley worker` under a steady load of REST sends while one dependency
/// restarts or crashes: afterwards a new message reaches the room's subscriber within 5 s, with
/// no restart by hand; every acknowledged message is stored once and published, and an event
/// published twice carries the same `hash` both times.
struct DependencyRestartTests {
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case postgresRestart, postgresCrash, redisRestart, brokerRestart
        var testDescription: String { rawValue }

        var service: String {
            switch self {
            case .postgresRestart, .postgresCrash: "postgres"
            case .redisRestart: "redis"
            case .brokerRestart: "mosquitto"
            }
        }
    }

    /// Faults in two chains that run side by side, each fault on services of its own: the
    /// PostgreSQL faults one after the other, and the Redis and broker faults one after the
    /// other. Two stacks at once halve the suite's longest test (about 89 s when all four ran in
    /// turn); four stacks of five processes at once, each under load, would starve the rest of
    /// the suite on a two-core machine.
    enum Chain: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case database, redisAndBroker
        var testDescription: String { rawValue }

        var faults: [Fault] {
            switch self {
            case .database: [.postgresRestart, .postgresCrash]
            case .redisAndBroker: [.redisRestart, .brokerRestart]
            }
        }
    }

    @Test(arguments: Chain.allCases)
    func deliveryRecoversAfter(_ chain: Chain) async throws {
        for fault in chain.faults {
            let services = try await TestServices.makePrivate()
            do {
                try await exercise(fault, services: services)
            } catch {
                try? await services.shutdown()
                throw error
            }
            try await services.shutdown()
        }
    }

    @Test func everyFaultIsInOneChain() {
        #expect(
            Chain.allCases.flatMap(\.faults).sorted { $0.rawValue < $1.rawValue }
                == Fault.allCases.sorted { $0.rawValue < $1.rawValue })
    }

    private func exercise(_ fault: Fault, services: TestServices) async throws {
        let database = try await services.makeDatabase(migrated: true)
        // Statements PostgreSQL does not start answering fail after 3 s (30 s by default), so a
        // request during its outage is answered 503 while the outage lasts.
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_POSTGRES_ANSWER_TIMEOUT": "3"
            ]) { $1 })
        let stack = try await LiveStack.start(parley)
        let reader = try RoomReader(services: services)
        do {
            try await exercise(fault, services: services, database: database, stack: stack, reader: reader)
        } catch {
            await reader.stop()
            await stack.stop()
            throw error
        }
        await reader.stop()
        await stack.stop()
    }

    private func exercise(
        _ fault: Fault, services: TestServices, database: PostgresConfiguration, stack: LiveStack, reader: RoomReader
    ) async throws {
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let (roomID, roomUID) = (Int(room.id), room.uid)
        try await reader.subscribe(to: "chat-room/\(roomUID)")

        func send(_ uid: String) async -> Int {
            let response = try? await stack.request(
                "POST", "/v1/rooms/\(roomID)/messages", body: #"{"content":"message \#(uid)","uid":"\#(uid)"}"#,
                token: alice.token)
            return response?.status ?? 0
        }
        // The reader is subscribed once a first message reaches it.
        #expect(await send("warm-up") == 201)
        #expect(await reader.waitFor("warm-up", within: .seconds(10)), "\(stack.log("worker.log"))")

        // Ten sends a second, each in its own task, for the whole fault.
        let load = Task {
            var sends: [Task<(String, Int, Date), Never>] = []
            var index = 0
            while !Task.isCancelled {
                let uid = "\(fault.rawValue)-\(index)"
                sends.append(Task { (uid, await send(uid), Date()) })
                index += 1
                try? await Task.sleep(for: .milliseconds(100))
            }
            var answers: [String: (status: Int, answered: Date)] = [:]
            for send in sends {
                let (uid, status, answered) = await send.value
                answers[uid] = (status, answered)
            }
            return answers
        }
        try await Task.sleep(for: .seconds(1))
        if fault == .postgresCrash {
            try await services.crash(fault.service)
        } else {
            try await services.stop(fault.service)
        }
        let stopped = Date()
        if fault.service == "postgres" {
            // Not a 500 and not a wait: 503 `unavailable` with Retry-After, within the bound.
            let refused = try await stack.request("GET", "/v1/rooms", token: alice.token)
            #expect(refused.status == 503, "a request during the outage got \(refused.status) \(refused.text)")
            #expect((try? refused.decoded(ProblemDetails.self))?.code == "unavailable")
            #expect(Date().timeIntervalSince(stopped) < 5, "the 503 took \(Date().timeIntervalSince(stopped)) s")
        }
        let outage = Date().timeIntervalSince(stopped)
        if outage < 5 { try await Task.sleep(for: .seconds(5 - outage)) }
        try await services.start(fault.service)
        let restarted = Date()
        try await Task.sleep(for: .seconds(2))

        let probe = "probe-\(fault.rawValue)"
        let probeStatus = await send(probe)
        #expect(probeStatus == 201, "the send 2 s after \(fault.service) came back got \(probeStatus)")
        #expect(
            await reader.waitFor(probe, within: .seconds(5)),
            "a message sent 2 s after \(fault.service) came back did not arrive within 5 s: \(stack.log("worker.log"))"
        )
        try await Task.sleep(for: .seconds(1))
        load.cancel()
        let answers = await load.value
        let acknowledged = Set(answers.filter { $0.value.status == 200 || $0.value.status == 201 }.keys)
        #expect(!acknowledged.isEmpty)
        // What a client saw, for the README's table of restarts.
        let answeredAgain = answers.values.filter { $0.answered > restarted && $0.status == 201 }.map(\.answered).min()
        let deliveredAgain = reader.events().filter { $0.arrived > restarted }.map(\.arrived).min()
        let during = answers.values.filter { $0.answered > stopped && $0.answered < restarted }
        print(
            "recovery after \(fault.rawValue): sends during the outage answered "
                + "\(Dictionary(grouping: during, by: \.status).mapValues(\.count).sorted { $0.key < $1.key }); "
                + "first 201 \(Self.seconds(answeredAgain, after: restarted)) and first delivery "
                + "\(Self.seconds(deliveredAgain, after: restarted)) after the service was back")

        // Every acknowledged send is published (the backlog drains), each uid with one hash.
        for uid in acknowledged.sorted() {
            guard await reader.waitFor(uid, within: .seconds(15)) else {
                Issue.record("acknowledged message \(uid) was never published: \(stack.log("worker.log"))")
                break
            }
        }
        for (uid, hashes) in reader.hashesByUID() where hashes.count > 1 {
            Issue.record("message \(uid) was published with different hashes: \(hashes)")
        }

        // And stored once each.
        let pool = PostgresPool(configuration: database, logger: .quiet)
        // Bounded: a statement PostgresNIO writes into a connection closed by the restart never ends.
        let stored = try await withTimeout(.seconds(60)) {
            try await pool.withRunningClient { pool in
                var counts: [String: Int] = [:]
                let rows = try await pool.client.query(
                    "SELECT uid, count(*)::int FROM messenger.message WHERE chat_room_id = \(roomID) GROUP BY uid",
                    logger: .quiet)
                for try await (uid, count) in rows.decode((String, Int).self) { counts[uid] = count }
                return counts
            }
        }
        #expect(acknowledged.subtracting(stored.keys).isEmpty, "acknowledged but not stored")
        #expect(stored.values.allSatisfy { $0 == 1 })
    }
}

extension DependencyRestartTests {
    static func seconds(_ date: Date?, after start: Date) -> String {
        guard let date else { return "never" }
        return String(format: "%.2f s", date.timeIntervalSince(start))
    }
}

/// A stock MQTT client (`mosquitto_sub`) with a persistent session on the room topic, as a
/// phone would hold it: it reconnects by itself and gets what was published while it was away.
final class RoomReader: Sendable {
    let services: TestServices
    let log: String
    let pid = Mutex<Int32?>(nil)

    init(services: TestServices) throws {
        self.services = services
        log = TestScratch.path("parley-reader", suffix: ".log")
    }

    /// Starts the subscriber and returns once the broker acknowledged the subscription: a
    /// message published before that is not queued for a session that did not exist yet, and
    /// under load the REST warm-up send once reached the broker first (the reader waited 10 s
    /// for a message that was never going to come).
    func subscribe(to topic: String) async throws {
        // Line-buffered: to a file, mosquitto_sub's stdout is block-buffered and its SUBACK line
        // (and each message) would wait for 4 KiB or its exit.
        let started = try Subprocess.start(
            "/usr/bin/stdbuf",
            [
                "-oL", "/usr/bin/mosquitto_sub",
                "-h", "127.0.0.1", "-p", String(services.port("MQTT")), "-u", "parley-server", "-P",
                services.secret("MQTT"), "-V", "mqttv311", "-i", "reader-\(UUID().uuidString.prefix(8))", "-c",
                "-q", "1", "-t", topic, "-F", "%U %p", "-d",
            ], outputFile: log)
        pid.withLock { $0 = started }
        // `-d` logs the protocol's steps beside the messages (which `events()` tells apart).
        for _ in 0..<300 {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("received SUBACK") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestEnvironmentError("mosquitto_sub was not subscribed within 15 s")
    }

    /// Events received so far, as (uid, hash, when it arrived); each line is
    /// `<unix time with nanoseconds> <payload>`.
    func events() -> [(uid: String, hash: String, arrived: Date)] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let time = Double(parts[0]),
                let event = try? JSONCoding.decoder.decode(Envelope<Message>.self, from: Data(parts[1].utf8))
            else { return nil }
            return (event.data.uid, event.hash, Date(timeIntervalSince1970: time))
        }
    }

    func hashesByUID() -> [String: Set<String>] {
        events().reduce(into: [:]) { $0[$1.uid, default: []].insert($1.hash) }
    }

    func waitFor(_ uid: String, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if events().contains(where: { $0.uid == uid }) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return events().contains { $0.uid == uid }
    }

    func stop() async {
        guard let pid = pid.withLock({ $0 }) else { return }
        await Subprocess.terminate(pid)
        try? FileManager.default.removeItem(atPath: log)
    }
}
