import Logging
import ParleyCore

/// The hook through which ended sessions reach the broker. Until the broker plugin listens
/// on `$CONTROL/parley-auth/v1`, it records which clients must go; their MQTT passwords
/// expire on their own.
struct LoggedBrokerSessionControl: BrokerSessionControl {
    let logger: Logger

    func disconnect(clientIDs: [String]) async {
        logger.notice("MQTT clients of ended sessions", metadata: ["client_ids": "\(clientIDs)"])
    }
}
