import ParleyMQTT
import ParleyTestSupport

@testable import ParleyAPI

extension PluginBroker {
    /// A broker with Parley's plugin for the processes of ``ParleyCommand``: their token key
    /// and server identity, asking the `serve` whose internal listener is on `internalPort`.
    static func forParley(_ services: TestServices, internalPort: Int) async throws -> PluginBroker {
        try await PluginBroker(
            tokenKeyBase64: ParleyCommand.tokenKey, serverUsername: "parley-server",
            serverPassword: services.secret("MQTT"), aclURL: "http://127.0.0.1:\(internalPort)/internal/broker/acl")
    }

    /// A user's MQTT client, connected with the credentials the login answered (`username`,
    /// `password`, `clientId`).
    func connectedClient(_ login: LoginResponse.MQTT) async throws -> MQTTClient {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                port: port, username: login.username, password: login.password, clientID: login.clientId,
                acknowledgementTimeout: .seconds(5)),
            logger: .quiet)
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        return client
    }
}
