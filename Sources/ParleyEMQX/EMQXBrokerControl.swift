import Logging
import ParleyCore

/// What Parley's plugin does on `$CONTROL/parley-auth/v1`, done through EMQX's management
/// API for a broker that has no such plugin.
///
/// - Ending sessions kicks their clients. Their tokens need no list of revocations at the
///   broker: EMQX asks Parley's authentication endpoint at every CONNECT, which refuses a
///   revoked session.
/// - A user who lost a topic (a room, a blocker's presence) is unsubscribed from it on each of
///   their clients, whose cached authorisation is dropped: EMQX authorises a subscription once,
///   at SUBSCRIBE, not each delivery as the plugin does.
/// - Every user's answers on a topic (`*`, a user's changed privacy) unsubscribe each of its
///   subscribers: their next SUBSCRIBE is asked again. A topic with a `+` level (presence of
///   room-mates one may have lost) drops the user's cached answers only: which presence topics
///   they follow is not known here, so those subscriptions hold until the next SUBSCRIBE.
public struct EMQXBrokerControl: BrokerSessionControl {
    let api: EMQXManagementAPI
    let logger: Logger

    public init(api: EMQXManagementAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    public func end(sessions: [Int64], clientIDs: [String]) async {
        for clientID in clientIDs {
            do {
                try await api.kick(clientID: clientID)
            } catch {
                // The session is revoked in the database: its client cannot connect again.
                logger.error("could not disconnect an ended session's client", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Applies a command as the plugin would; throws when EMQX's API fails, so the relay
    /// tries again (each step is idempotent).
    public func apply(_ command: BrokerControl) async throws {
        var lost: [String: [String]] = [:]
        var users: [String] = []
        for entry in command.invalidate {
            let parts = entry.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if lost[parts[0]] == nil { users.append(parts[0]) }
            lost[parts[0], default: []].append(parts[1])
        }
        for user in users where user == "*" {
            for topic in lost[user] ?? [] {
                for clientID in try await api.subscriberIDs(topic: topic) {
                    try await api.cleanAuthorizationCache(clientID: clientID)
                    try await api.unsubscribe(clientID: clientID, topic: topic)
                }
            }
        }
        for user in users where user != "*" {
            for clientID in try await api.clientIDs(username: user) {
                // The cached answers first: a SUBSCRIBE between the two would otherwise be
                // allowed from the cache, and never asked again.
                try await api.cleanAuthorizationCache(clientID: clientID)
                // Only topics a client subscribes to: chat-in is written, never subscribed.
                for topic in lost[user] ?? [] where !topic.hasPrefix(Topic.chatInPrefix) && !topic.contains("+") {
                    try await api.unsubscribe(clientID: clientID, topic: topic)
                }
            }
        }
        for clientID in command.kickClients { try await api.kick(clientID: clientID) }
    }
}
