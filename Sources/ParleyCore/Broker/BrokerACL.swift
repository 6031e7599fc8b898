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
        /// Allowed if this user's presence may be followed by the client's user: their privacy
        /// allows it and they did not block them (``PrivacyRepository/maySeePresence(of:viewer:)``).
        case presenceOf(userID: Int64)
    }

    /// A permission a broker may keep beside the answer it asked for.
    public struct Grant: Sendable, Equatable {
        public let topic: String
        public let access: Access

        public init(topic: String, access: Access) {
            self.topic = topic
            self.access = access
        }
    }

    /// What an allowed `access` to `topic` also allows: ``decide(topic:access:userID:isServer:senders:)``
    /// asks the same of these, so a broker's cache may keep them with the answer rather than
    /// ask again. A room's subscriber may write its input: a member's first message in a room
    /// they subscribed to is then no question that every client of the broker waits behind.
    public static func implied(
        by topic: String, access: Access, userID: Int64?, senders: ChatInSender = .plugin
    ) -> [Grant] {
        guard access == .subscribe, let userID, case .room(let uid)? = Topic(topic) else { return [] }
        let input: Topic = senders == .plugin ? .chatIn(uid: uid) : .chatInAs(uid: uid, userID: userID)
        return [Grant(topic: input.name, access: .write)]
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
            // Presence: each user writes and reads their own; others read it as its user's
            // privacy allows and no block forbids.
            if owner == userID { return .allow }
            return access == .write ? .deny : .presenceOf(userID: owner)
        }
    }
}
