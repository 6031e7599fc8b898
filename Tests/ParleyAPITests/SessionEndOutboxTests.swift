import Foundation
import ParleyCore
import ParleyPostgres
import Testing

@testable import ParleyAPI

/// Ended sessions reach the broker through the outbox as well, in the transaction that ends
/// them, so a broker (or EMQX's management API) that is down at that moment still hears of
/// them: the relay retries. Here the broker's direct path does nothing (`NoBroker`).
struct SessionEndOutboxTests {
    @Test func aLogoutAndADeletedDeviceQueueTheirBrokerCommands() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let login = try await client.signUp()
            #expect(try await client.json(.post, "/v1/auth/logout", token: token(login)).status == .noContent)
            let commands = try await Self.commands(harness.database)
            let logout = commands.first { $0.kickClients == [login.mqtt.clientId] }
            #expect(logout != nil)
            #expect(logout?.revokeSessions.count == 1)

            let phone = try await client.signUp(device: #"{"platform":"ios","name":"phone"}"#)
            let deviceID = try #require(phone.deviceId)
            let deleted = try await client.json(.delete, "/v1/devices/\(deviceID)", token: token(phone))
            #expect(deleted.status == .noContent)
            let afterDelete = try await Self.commands(harness.database)
            #expect(afterDelete.contains { $0.kickClients == [phone.mqtt.clientId] && $0.revokeSessions.count == 1 })
        }
    }

    /// A spent refresh token revokes its session once; replaying it again queues nothing more.
    @Test func aReplayedRefreshTokenQueuesOneCommand() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let login = try await client.signUp()
            let body = #"{"refreshToken":"\#(login.refreshToken)"}"#
            #expect(try await client.json(.post, "/v1/auth/refresh", body: body).status == .ok)
            for _ in 0..<3 {
                #expect(try await client.json(.post, "/v1/auth/refresh", body: body).status == .unauthorized)
            }
            let kicks = try await Self.commands(harness.database).filter { $0.kickClients == [login.mqtt.clientId] }
            #expect(kicks.count == 1)
        }
    }

    static func commands(_ database: PostgresPool) async throws -> [BrokerControl] {
        try await RecordedEvents.read(database).flatMap(\.delivery.controls)
    }
}
