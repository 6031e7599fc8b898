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
        let internalPort = try await PluginBroker.freePort()
        let broker = try await PluginBroker.forParley(services, internalPort: internalPort)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_REDIS_DATABASE": String(Self.redisDatabase),
            ]) { $1 })
        let stack = try await LiveStack.start(parley, serve: false, worker: false)
        do {
            // Serve A answers the broker plugin's questions; serve B only clients.
            async let serveA = stack.startServe("serve-a", environment: ["PARLEY_INTERNAL_PORT": String(internalPort)])
            async let serveB = stack.startServe("serve-b")
            async let workerA = stack.startWorker("worker-a")
            async let workerB = stack.startWorker("worker-b")
            let (serves, stopping) = ([try await serveA, try await serveB], try await workerA)
            _ = try await workerB
            try await exercise(serves.map(stack.through), broker: broker) {
                #expect(await stopping.stop() == 0)
            }
        } catch {
            Issue.record("logs: \(stack.processes.map { "\($0.name): \($0.log.suffix(3_000))" })")
            await stack.stop()
            _ = await broker.stop()
            throw error
        }
        for (name, status) in await stack.stop() { #expect(status == 0, "\(name)") }
        #expect(await broker.stop() == 0)
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
