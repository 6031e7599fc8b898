import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Parley's processes keep no state of their own: two `serve` and two `worker` (every role)
/// against the same stores and broker share the work, and one worker stopping in the middle
/// loses nothing (the other's relay takes the outbox, its ingest the shared input).
struct MultiProcessTests {
    static let redisDatabase = 12

    @Test func twoServesAndTwoWorkersDeliverEveryMessageOnceThroughAWorkersStop() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        try await services.emptyRedis(database: Self.redisDatabase)
        let internalPort = try PluginBroker.freePort()
        let broker = try await PluginBroker.forParley(services, internalPort: internalPort)
        let directory = TestScratch.path("parley-multi")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = ParleyCommand(database: database, services: services).environment.merging([
            "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_REDIS_DATABASE": String(Self.redisDatabase),
        ]) { $1 }
        func start(_ name: String, _ arguments: [String], _ environment: [String: String] = [:]) throws -> Int32 {
            try Subprocess.start(
                try ParleyCommand.binary, arguments, environment: base.merging(environment) { $1 },
                outputFile: "\(directory)/\(name).log")
        }
        // Serve A answers the broker plugin's questions; serve B only clients.
        var processes = [
            "serve-a": try start("serve-a", ["serve"], ["PARLEY_INTERNAL_PORT": String(internalPort)]),
            "serve-b": try start("serve-b", ["serve"]), "worker-a": try start("worker-a", ["worker"]),
            "worker-b": try start("worker-b", ["worker"]),
        ]
        func log(_ name: String) -> String {
            (try? String(contentsOfFile: "\(directory)/\(name).log", encoding: .utf8)) ?? ""
        }
        do {
            var bases: [String] = []
            for name in ["serve-a", "serve-b"] {
                let port = try await LiveStack.port(inFile: "\(directory)/\(name).log", listener: "cleartext")
                bases.append("http://127.0.0.1:\(port)")
            }
            for name in ["worker-a", "worker-b"] {
                _ = try await LiveStack.port(inFile: "\(directory)/\(name).log", listener: "internal")
            }
            let stacks = bases.map { LiveStack(serve: 0, worker: 0, base: $0, workerBase: "", directory: directory) }
            try await exercise(stacks, broker: broker) {
                #expect(await Subprocess.terminate(processes["worker-a"] ?? 0) == 0)
                processes["worker-a"] = nil
            }
        } catch {
            Issue.record("logs: \(processes.keys.sorted().map { "\($0): \(log($0).suffix(3_000))" })")
            for pid in processes.values { _ = await Subprocess.terminate(pid) }
            _ = await broker.stop()
            throw error
        }
        for (name, pid) in processes { #expect(await Subprocess.terminate(pid) == 0, "\(name)") }
        #expect(await broker.stop() == 0)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Alice sends over REST through either serve, Carol over MQTT; Bob and Carol listen on
    /// the room topic. Half the messages go before `stopWorker`, half after.
    private func exercise(
        _ stacks: [LiveStack], broker: PluginBroker, stopWorker: () async throws -> Void
    ) async throws {
        let alice = try await stacks[0].signUp("alice")
        let bob = try await stacks[1].signUp("bob")
        let carol = try await stacks[0].signUp("carol")
        let room = try await stacks[1].request(
            "POST", "/v1/rooms",
            body:
                #"{"name":"Two of each","members":[{"userId":\#(bob.id),"role":"writer"},{"userId":\#(carol.id),"role":"writer"}]}"#,
            token: alice.token
        ).decoded(RoomResponse.self)
        let (roomID, uid) = (room.id, room.uid)
        let bobClient = try await broker.connectedClient(bob.mqtt)
        let carolClient = try await broker.connectedClient(carol.mqtt)
        for client in [bobClient, carolClient] { try await client.subscribe("chat-room/\(uid)") }

        var expected = Set<String>()
        for phase in 0..<2 {
            if phase == 1 { try await stopWorker() }
            for i in 0..<10 {
                let rest = "rest-\(phase)-\(i)"
                let sent = try await stacks[i % 2].request(
                    "POST", "/v1/rooms/\(roomID)/messages", body: #"{"content":"\#(rest)","uid":"\#(rest)"}"#,
                    token: alice.token)
                #expect(sent.status == 201, "\(rest) \(sent.text)")
                let mqtt = "mqtt-\(phase)-\(i)"
                try await carolClient.publish(
                    topic: "chat-in/\(uid)",
                    string:
                        #"{"type":"new-message-notification","data":{"content":"\#(mqtt)","uid":"\#(mqtt)"},"hash":"\#(mqtt)"}"#
                )
                expected.formUnion([rest, mqtt])
            }
        }
        for client in [bobClient, carolClient] {
            let received = await newMessageUIDs(client, until: expected)
            #expect(received == expected, "missing: \(expected.subtracting(received).sorted())")
            await client.shutdown()
        }
        // Stored once each, seq gap-free, whichever serve reads it.
        for stack in stacks {
            let history = try await stack.request(
                "GET", "/v1/rooms/\(roomID)/messages?after=0&limit=100", token: bob.token
            ).decoded(MessagesResponse.self).messages
            #expect(history.map(\.uid).sorted() == expected.sorted())
            #expect(history.map(\.seq) == Array(1...Int64(expected.count)))
        }
    }

    /// The uids of the new messages a client receives, until it has all of `expected` or
    /// 30 s pass; a duplicate (at least once) counts once.
    private func newMessageUIDs(_ client: MQTTClient, until expected: Set<String>) async -> Set<String> {
        var seen = Set<String>()
        let inbox = MessageInbox.of(client)
        let deadline = ContinuousClock.now + .seconds(30)
        while !expected.isSubset(of: seen), ContinuousClock.now < deadline {
            guard let message = await inbox.next(within: .seconds(1)),
                let event = try? JSONCoding.decoder.decode(Envelope<Message>.self, from: Data(message.payload)),
                event.type == "new-message-notification"
            else { continue }
            seen.insert(event.data.uid)
        }
        return seen
    }
}
