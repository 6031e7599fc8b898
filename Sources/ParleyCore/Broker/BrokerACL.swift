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
    }

    /// - Parameters:
    ///   - userID: the client's user (its MQTT user name); nil for an unknown identity.
    ///   - isServer: the server's own identity, which may do anything.
    public static func decide(topic: String, access: Access, userID: Int64?, isServer: Bool) -> Decision {
        if isServer { return .allow }
        guard let userID, isPlainTopic(topic) else { return .deny }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (levels.first, levels.count) {
        case ("chat-room", 2) where isRoomUID(levels[1]):
            // Canonical room events: members read, only the server writes.
            return access == .write ? .deny : .requiresRoomRole(roomUID: levels[1], minimum: .reader)
        case ("chat-in", 2) where isRoomUID(levels[1]):
            // Client input: members write (the ingest checks the type's role), only the
            // server's ingest reads.
            return access == .write ? .requiresRoomRole(roomUID: levels[1], minimum: .reader) : .deny
        case ("messenger-notifications", 2):
            return access != .write && levels[1] == String(userID) ? .allow : .deny
        case ("user", 3) where levels[2] == "online" && Int64(levels[1]) != nil:
            // Presence: anyone reads, each user writes their own.
            return access != .write || levels[1] == String(userID) ? .allow : .deny
        default:
            return .deny
        }
    }

    /// No wildcards, no `$`-topics (`$SYS`, `$share`, `$CONTROL`), no empty levels, bounded.
    static func isPlainTopic(_ topic: String) -> Bool {
        guard !topic.isEmpty, topic.utf8.count <= 256, !topic.hasPrefix("$"), !topic.hasPrefix("/") else {
            return false
        }
        return !topic.contains("+") && !topic.contains("#") && !topic.contains("//") && !topic.hasSuffix("/")
            && !topic.unicodeScalars.contains { $0.value < 0x20 }
    }

    /// Room uids as generated: base64url characters, 16 to 64 of them.
    static func isRoomUID(_ text: String) -> Bool {
        (16...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            }
    }
}
