import Foundation
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `PARLEY_OTEL_ENDPOINT`: a message sent over REST and one sent over MQTT are each one trace
/// from the send to the push, across `serve` and `worker`, received by an OTLP/HTTP endpoint.
struct TraceTests {
    @Test func aMessageIsOneTraceFromItsSendThroughTheRelayAndFanOutToItsPush() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        // The jobs of an earlier run that ended midway must not be taken for this one's.
        try await services.emptyRedis(database: Self.redisDatabase)
        let receiver = try await OTLPReceiver.start()
        let internalPort = try await PluginBroker.freePort()
        let broker = try await PluginBroker.forParley(services, internalPort: internalPort)
        do {
            try await PushFixture.with { push in
                let keyFile = TestScratch.path("parley-trace-apns", suffix: ".p8")
                try push.apnsKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: keyFile) }
                let parley = ParleyCommand(
                    environment: ParleyCommand(database: database, services: services).environment.merging([
                        "PARLEY_OTEL_ENDPOINT": receiver.endpoint,
                        // The SDK's own setting: spans leave every 100 ms rather than every 5 s.
                        "OTEL_BSP_SCHEDULE_DELAY": "100",
                        "PARLEY_MQTT_PORT": String(broker.port), "PARLEY_INTERNAL_PORT": String(internalPort),
                        "PARLEY_APNS_KEY_FILE": keyFile, "PARLEY_APNS_KEY_ID": PushFixture.apnsKeyID,
                        "PARLEY_APNS_TEAM_ID": PushFixture.apnsTeamID, "PARLEY_APNS_TOPIC": PushFixture.apnsTopic,
                        "PARLEY_APNS_URL": push.simulator.baseURL, "PARLEY_PUSH_CA_FILE": push.certificatePath,
                        // Its jobs stay out of the shared Redis database other tests consume.
                        "PARLEY_REDIS_DATABASE": String(Self.redisDatabase),
                    ]) { $1 })
                let stack = try await LiveStack.start(parley)
                do {
                    try await exercise(stack, broker: broker, receiver: receiver)
                } catch {
                    Issue.record("serve: \(stack.log("serve.log"))\nworker: \(stack.log("worker.log"))")
                    await stack.stop()
                    throw error
                }
                await stack.stop()
            }
        } catch {
            await receiver.stop()
            _ = await broker.stop()
            throw error
        }
        await receiver.stop()
        #expect(await broker.stop() == 0)
    }

    static let redisDatabase = 11

    private func exercise(_ stack: LiveStack, broker: PluginBroker, receiver: OTLPReceiver) async throws {
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        // Bob's phone, so that each message ends in a push.
        let token = "trace-\(UUID().uuidString.prefix(8))"
        let devices = try await stack.request("GET", "/v1/devices", token: bob.token).decoded(DevicesResponse.self)
        let device = try await stack.request(
            "PUT", "/v1/devices/\(try #require(devices.devices.first?.id))/push",
            body: #"{"pushToken":"\#(token)","pushProvider":"apns"}"#, token: bob.token)
        #expect(device.status == 204)
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let (roomID, uid) = (room.id, room.uid)

        // A client's own trace context is not followed: the send starts a trace of its own.
        let forged = "0af7651916cd43dd8448eb211c80319c"
        let sent = try await stack.request(
            "POST", "/v1/rooms/\(roomID)/messages", body: #"{"content":"over REST","uid":"rest-1"}"#,
            token: alice.token,
            headers: ["traceparent: 00-\(forged)-b7ad6b7169203331-01"])
        #expect(sent.status == 201)
        let request = try await chain(
            from: { $0.service == "parley-serve" && $0.attributes["http.route"] == "/v1/rooms/{id}/messages" },
            in: receiver)
        #expect(request.root.name == "POST /v1/rooms/{id}/messages")
        #expect(request.root.parentSpanID.isEmpty)
        #expect(request.root.traceID != forged)
        #expect(request.root.attributes["http.response.status_code"] == "201")
        #expect(request.root.attributes["parley.request_id"]?.isEmpty == false)

        let sender = try await broker.connectedClient(alice.mqtt)
        defer { Task { await sender.shutdown() } }
        try await sender.publish(
            topic: "chat-in/\(uid)",
            string: #"{"type":"new-message-notification","data":{"content":"over MQTT","uid":"mqtt-1"},"hash":"h1"}"#)
        let published = try await chain(from: { $0.service == "parley-worker" && $0.name == "chat-in" }, in: receiver)
        #expect(published.root.parentSpanID.isEmpty)
        #expect(published.root.attributes["messaging.destination.name"] == "chat-in/\(uid)")
        #expect(published.root.traceID != request.root.traceID)
        // Neither the device's token (an APNs request's path holds it) nor any message's text
        // is recorded.
        for secret in [token, "over REST", "over MQTT"] {
            #expect(!receiver.received.contains { "\($0.name) \($0.attributes)".contains(secret) })
        }
    }

    /// The trace whose first span `root` picks, through a relay span that is its child, a
    /// fan-out span that is the relay's and a delivered push that is the fan-out's (a step
    /// tried twice has two spans; one path through them is enough), all in `parley-worker`
    /// and with the trace's id.
    private func chain(from root: @escaping (OTLPReceiver.Span) -> Bool, in receiver: OTLPReceiver) async throws
        -> TraceChain
    {
        func children(of parent: OTLPReceiver.Span, named name: String, in spans: [OTLPReceiver.Span])
            -> [OTLPReceiver.Span]
        {
            spans.filter {
                $0.parentSpanID == parent.spanID && $0.name == name && $0.traceID == parent.traceID
                    && $0.service == "parley-worker"
            }
        }
        for _ in 0..<200 {
            let spans = receiver.received
            if let first = spans.first(where: root) {
                for relay in children(of: first, named: "outbox relay", in: spans) {
                    for fanout in children(of: relay, named: "fan-out", in: spans) {
                        let pushes = children(of: fanout, named: "push", in: spans)
                        if let push = pushes.first(where: { $0.attributes["parley.push.outcome"] == "delivered" }) {
                            return TraceChain(root: first, relay: relay, fanout: fanout, push: push)
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestEnvironmentError("no whole trace among the spans received: \(receiver.received)")
    }

    struct TraceChain {
        let root: OTLPReceiver.Span
        let relay: OTLPReceiver.Span
        let fanout: OTLPReceiver.Span
        let push: OTLPReceiver.Span
    }
}
