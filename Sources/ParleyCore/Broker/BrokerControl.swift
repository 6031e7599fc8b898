import Foundation

/// Commands for Parley's broker plugin on `$CONTROL/parley-auth/v1` (server only): a JSON
/// object of string arrays, applied in this order.
public struct BrokerControl: Codable, Sendable, Equatable {
    public static let topic = "$CONTROL/parley-auth/v1"

    /// `"<userId> <topic>"`: drop the user's cached decisions for the topic, so deliveries of
    /// a room they lost stop at once.
    public var invalidate: [String] = []
    /// Sessions whose MQTT tokens are refused from now on.
    public var revokeSessions: [String] = []
    /// Clients to disconnect.
    public var kickClients: [String] = []

    public init(invalidate: [String] = [], revokeSessions: [String] = [], kickClients: [String] = []) {
        self.invalidate = invalidate
        self.revokeSessions = revokeSessions
        self.kickClients = kickClients
    }

    /// A user lost a room: neither its events nor its input topic are theirs any more.
    public static func roomLost(roomUID: String, userIDs: [Int64]) -> BrokerControl {
        BrokerControl(
            invalidate: userIDs.flatMap {
                [
                    "\($0) \(Topic.room(roomUID))", "\($0) \(Topic.chatIn(roomUID))",
                    "\($0) \(Topic.chatInAs(uid: roomUID, userID: $0).name)",
                ]
            })
    }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
