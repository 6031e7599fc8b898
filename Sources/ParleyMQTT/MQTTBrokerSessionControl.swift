import Logging
import ParleyCore

/// Ends sessions at the broker through the plugin's `$CONTROL` topic.
public struct MQTTBrokerSessionControl: BrokerSessionControl {
    let client: MQTTClient
    let logger: Logger

    public init(client: MQTTClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func end(sessions: [Int64], clientIDs: [String]) async {
        let command = BrokerControl(revokeSessions: sessions.map(String.init), kickClients: clientIDs)
        do {
            try await client.publish(topic: BrokerControl.topic, string: command.json())
        } catch {
            // The tokens still expire on their own; the session is revoked in the database.
            logger.error("could not tell the broker about ended sessions", metadata: ["error": "\(error)"])
        }
    }
}
