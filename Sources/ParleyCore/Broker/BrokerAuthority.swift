import Foundation

/// Answers a broker's questions — may this client connect, is it the server, may it use
/// this topic — for every broker integration alike.
public struct BrokerAuthority: Sendable {
    /// The server's own MQTT identity (a superuser); the password is compared in constant time.
    public struct ServerIdentity: Sendable {
        public let username: String
        public let password: String

        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// Who connected.
    public enum Identity: Sendable, Equatable {
        case server
        case user(Int64)
    }

    let key: MQTTTokenKey
    let server: ServerIdentity?
    let sessions: any SessionRepository
    let rooms: any RoomRepository
    let privacy: any PrivacyRepository
    /// What vouches for chat-in's sender (``ChatInSender``): the topics a user may write follow.
    let senders: ChatInSender

    public init(
        key: MQTTTokenKey, server: ServerIdentity?, sessions: any SessionRepository, rooms: any RoomRepository,
        privacy: any PrivacyRepository, senders: ChatInSender = .plugin
    ) {
        self.key = key
        self.server = server
        self.sessions = sessions
        self.rooms = rooms
        self.privacy = privacy
        self.senders = senders
    }

    /// CONNECT: the server's credentials, or a user's MQTT token naming exactly this user
    /// and client id, unexpired, whose client id is still issued (not logged out).
    public func authenticate(username: String, password: String, clientID: String) async throws -> Identity? {
        if let server, username == server.username {
            return ConstantTime.equal(password.utf8, server.password.utf8) ? .server : nil
        }
        guard let userID = Int64(username), let token = try? MQTTToken.verify(password, key: key),
            token.userID == userID, token.clientID == clientID
        else { return nil }
        guard try await sessions.isClientActive(clientID: clientID, userID: userID, sessionID: token.sessionID) else {
            return nil
        }
        return .user(userID)
    }

    /// When an accepted user's MQTT password stops being valid (Unix seconds), for a broker
    /// that can end the connection then (EMQX's `expire_at`); nil for the server's password.
    public func expiry(ofPassword password: String) -> Int64? {
        (try? MQTTToken.verify(password, key: key))?.expiresAt
    }

    public func isSuperuser(username: String) -> Bool {
        server?.username == username
    }

    public func authorize(username: String, topic: String, access: BrokerACL.Access) async throws -> Bool {
        let decision = BrokerACL.decide(
            topic: topic, access: access, userID: Int64(username), isServer: isSuperuser(username: username),
            senders: senders)
        switch decision {
        case .allow: return true
        case .deny: return false
        case .requiresRoomRole(let uid, let minimum):
            guard let userID = Int64(username), let role = try await rooms.role(roomUID: uid, userID: userID) else {
                return false
            }
            return role >= minimum
        case .presenceOf(let ownerID):
            guard let userID = Int64(username) else { return false }
            return try await privacy.maySeePresence(of: ownerID, viewer: userID)
        }
    }

    /// What an allowed question also answers (``BrokerACL/implied(by:access:userID:senders:)``).
    public func implied(username: String, topic: String, access: BrokerACL.Access) -> [BrokerACL.Grant] {
        BrokerACL.implied(by: topic, access: access, userID: Int64(username), senders: senders)
    }
}
