/// The ACL table of `mqtt-protocol.md` as one pure decision: what a broker may let a client
/// do with a topic. Every broker integration (the mosquitto plugin, mosquitto-go-auth and
/// EMQX over HTTP) answers from this function.
public enum BrokerACL {
    /// What the client wants to do; the raw values are mosquitto-go-auth's `acc`.
    public enum Access: Int, Sendable, CaseIterable {
        /// Receive a message (a delivery to an existing subscription).
        case read = 1
        case write = 2
        case subscribe = 4
    }

    /// The answer, possibly pending a membership lookup.
    public enum Decision: Sendable, Equatable {
        case allow
        case deny
        /// Allowed if the user's effective role in the room with this uid is at least `minimum`.
        case requiresRoomRole(roomUID: String, minimum: RoomRole)
        /// Allowed unless this user blocked the client's user.
        case unlessBlockedBy(userID: Int64)
    }

    /// - Parameters:
    ///   - userID: the client's user (its MQTT user name); nil for an unknown identity.
    ///   - isServer: the server's own identity, which may do anything.
    ///   - senders: what vouches for chat-in's sender; with `.topic` only the topic naming it may
    ///     be written (on `chat-in/{uid}` a message would name nobody and be dropped unseen).
    public static func decide(
        topic: String, access: Access, userID: Int64?, isServer: Bool, senders: ChatInSender = .plugin
    ) -> Decision {
        if isServer { return .allow }
        guard let userID, let topic = Topic(topic) else { return .deny }
        switch topic {
        case .room(let uid):
            // Canonical room events: members read, only the server writes.
            return access == .write ? .deny : .requiresRoomRole(roomUID: uid, minimum: .reader)
        case .chatIn(let uid):
            // Client input: members write (the ingest checks the type's role), only the
            // server's ingest reads.
            guard senders == .plugin else { return .deny }
            return access == .write ? .requiresRoomRole(roomUID: uid, minimum: .reader) : .deny
        case .chatInAs(let uid, let sender):
            // The same, as one user: only that user writes it (the ingest takes the sender
            // from the topic when no plugin vouches for it).
            return access == .write && sender == userID ? .requiresRoomRole(roomUID: uid, minimum: .reader) : .deny
        case .notifications(let owner):
            return access != .write && owner == userID ? .allow : .deny
        case .presence(let owner):
            // Presence: each user writes their own; anyone reads it but whom its user blocked.
            if owner == userID { return .allow }
            return access == .write ? .deny : .unlessBlockedBy(userID: owner)
        }
    }
}
