import Foundation
import ParleyCore
import ParleyEMQX
import Synchronization
import Testing

/// What Parley's plugin does on `$CONTROL`, through EMQX 5's management API: the exact
/// requests, against a server speaking its shapes on loopback.
struct EMQXBrokerControlTests {
    let uid = "AbCdEfGhIjKlMnOpQrStUv"

    func withAPI(
        clients: [String: [String]] = [:], subscribers: [String: [String]] = [:],
        _ body: (EMQXAPIServer, EMQXBrokerControl) async throws -> Void
    ) async throws {
        let server = try await EMQXAPIServer.start(clients: clients, subscribers: subscribers)
        let api = EMQXManagementAPI(.init(baseURL: server.baseURL + "/", key: "parley", secret: "s3cret"))
        do {
            try await body(server, EMQXBrokerControl(api: api, logger: .init(label: "test")))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func endingSessionsKicksTheirClientsWithTheAPIKey() async throws {
        try await withAPI { server, control in
            await control.end(sessions: [1, 2], clientIDs: ["parley-1", "odd id/1"])
            #expect(
                server.received.map(\.description) == [
                    "DELETE /api/v5/clients/parley-1 ", "DELETE /api/v5/clients/odd%20id%2F1 ",
                ])
            let credentials = Data("parley:s3cret".utf8).base64EncodedString()
            #expect(server.received.allSatisfy { $0.authorization == "Basic \(credentials)" })
        }
    }

    /// And who followed their presence is unsubscribed from it, to ask again (they may no longer
    /// be room-mates); their own presence subscriptions hold until their next SUBSCRIBE.
    @Test func aLostRoomIsUnsubscribedOnEveryClientOfItsUsersAndTheirAnswersForgotten() async throws {
        try await withAPI(clients: ["7": ["a", "b", "c"], "8": []], subscribers: ["user/7/online": ["d"]]) {
            server, control in
            for command in BrokerControl.roomLost(roomUID: uid, userIDs: [7, 8]) { try await control.apply(command) }
            #expect(
                server.received.map(\.description) == [
                    "GET /api/v5/subscriptions?topic=user%2F7%2Fonline&page=1&limit=100 ",
                    "DELETE /api/v5/clients/d/authorization/cache ",
                    #"POST /api/v5/clients/d/unsubscribe {"topic":"user/7/online"}"#,
                    "GET /api/v5/subscriptions?topic=user%2F8%2Fonline&page=1&limit=100 ",
                    "GET /api/v5/clients?username=7&page=1&limit=100 ",
                    "GET /api/v5/clients?username=7&page=2&limit=100 ",
                    "DELETE /api/v5/clients/a/authorization/cache ",
                    #"POST /api/v5/clients/a/unsubscribe {"topic":"chat-room/\#(uid)"}"#,
                    "DELETE /api/v5/clients/b/authorization/cache ",
                    #"POST /api/v5/clients/b/unsubscribe {"topic":"chat-room/\#(uid)"}"#,
                    "DELETE /api/v5/clients/c/authorization/cache ",
                    #"POST /api/v5/clients/c/unsubscribe {"topic":"chat-room/\#(uid)"}"#,
                    "GET /api/v5/clients?username=8&page=1&limit=100 ",
                ])
        }
    }

    @Test func theRelaysControlEventsGoToTheAPIInTheirPlaceAndTheRestToTheBroker() async throws {
        try await withAPI(clients: ["7": ["a"]]) { server, control in
            let broker = Recorder()
            let publisher = EMQXControlPublisher(publishing: broker, control: control)
            let command = BrokerControl(invalidate: ["7 user/9/online"], kickClients: ["x"])
            try await publisher.publish(events: [
                ("chat-room/\(uid)", "one"), (BrokerControl.topic, command.json()), ("chat-room/\(uid)", "two"),
            ])
            #expect(broker.batches.withLock { $0 } == [["chat-room/\(uid) one"], ["chat-room/\(uid) two"]])
            #expect(
                server.received.map(\.description) == [
                    "GET /api/v5/clients?username=7&page=1&limit=100 ",
                    "DELETE /api/v5/clients/a/authorization/cache ",
                    #"POST /api/v5/clients/a/unsubscribe {"topic":"user/9/online"}"#, "DELETE /api/v5/clients/x ",
                ])
        }
    }

    @Test func anAPIThatFailsOrRefusesTheKeyIsUnavailableAndOneThatRefusesTheRequestIsNot() async throws {
        try await withAPI(clients: ["7": ["a"]]) { server, control in
            server.failing.withLock { $0 = 503 }
            let down = await #expect(throws: EMQXAPIError.self) {
                try await control.apply(BrokerControl(kickClients: ["a"]))
            }
            #expect(down?.isUnavailability == true)
            // A key EMQX refuses is an outage an operator must mend, not a refusal to drop.
            server.failing.withLock { $0 = 401 }
            let unauthorized = await #expect(throws: EMQXAPIError.self) {
                try await control.apply(BrokerControl(kickClients: ["a"]))
            }
            #expect(unauthorized?.isUnavailability == true)
            server.failing.withLock { $0 = 400 }
            let refused = await #expect(throws: EMQXAPIError.self) {
                try await control.apply(BrokerControl(kickClients: ["a"]))
            }
            #expect(refused?.isUnavailability == false)
            // A client already gone is no failure.
            server.failing.withLock { $0 = 404 }
            try await control.apply(BrokerControl(kickClients: ["a"]))
        }
    }
}

final class Recorder: EventPublisher {
    let batches = Mutex<[[String]]>([])

    func publish(topic: String, payload: String) async throws {
        batches.withLock { $0.append(["\(topic) \(payload)"]) }
    }
    func publishTransient(topic: String, payload: String) async throws {}
    func publish(events: [(topic: String, payload: String)]) async throws {
        batches.withLock { $0.append(events.map { "\($0.topic) \($0.payload)" }) }
    }
}
