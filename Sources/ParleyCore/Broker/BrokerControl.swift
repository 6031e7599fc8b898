import Foundation

/// Commands for Parley's broker plugin on `$CONTROL/parley-auth/v1` (server only): a JSON
/// object of string arrays, applied in this order.
public struct BrokerControl: Codable, Sendable, Equatable {
    public static let topic = "$CONTROL/parley-auth/v1"

    /// `"<userId> <topic>"`: drop the user's cached decisions for the topic, so deliveries of
    /// a room they lost stop at once. `*` for the user names every user; a `+` level of the
    /// topic matches any one level (MQTT's single-level wildcard).
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

    /// Users lost a room: neither its events nor its input topic are theirs any more. And
    /// they may have stopped being room-mates of its members: whose presence they follow, and
    /// who follows theirs, is asked again (``Privacy/Presence/roomMates``). In commands of
    /// `chunk` users each, far under the plugin's 64 KiB.
    public static func roomLost(roomUID: String, userIDs: [Int64], chunk: Int = 100) -> [BrokerControl] {
        stride(from: 0, to: userIDs.count, by: chunk).map { start in
            BrokerControl(
                invalidate: userIDs[start..<min(start + chunk, userIDs.count)].flatMap {
                    [
                        "\($0) \(Topic.room(roomUID))", "\($0) \(Topic.chatIn(roomUID))",
                        "\($0) \(Topic.chatInAs(uid: roomUID, userID: $0).name)",
                        "\($0) \(Topic.presencePrefix)+\(Topic.presenceSuffix)", presenceOf($0),
                    ]
                })
        }
    }

    /// Every user's decisions on `userID`'s presence topic.
    public static func presenceOf(_ userID: Int64) -> String { "* \(Topic.presence(userID))" }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
