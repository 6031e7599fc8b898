/// Every topic of the MQTT contract (`asyncapi.yaml`), named here and nowhere else: the
/// server's publishers, the ingest, the ACL decision and the SQL that builds a room's topic
/// use these; the broker plugin's C table of prefixes is checked against ``prefixes`` by a test.
public enum Topic: Sendable, Equatable {
    /// `chat-room/{uid}`: a room's canonical events, written by the server only.
    case room(uid: String)
    /// `chat-in/{uid}`: what members publish to a room, read by the ingest only; the sender is
    /// the user id Parley's broker plugin stamps on it.
    case chatIn(uid: String)
    /// `chat-in/{uid}/{userId}`: the same, with the sender in the topic, which the ACL lets
    /// only that user write: what a broker without Parley's plugin (EMQX, mosquitto-go-auth)
    /// can vouch for.
    case chatInAs(uid: String, userID: Int64)
    /// `messenger-notifications/{userId}`: one user's notices.
    case notifications(userID: Int64)
    /// `user/{userId}/online`: one user's retained presence.
    case presence(userID: Int64)

    public static let roomPrefix = "chat-room/"
    public static let chatInPrefix = "chat-in/"
    public static let notificationsPrefix = "messenger-notifications/"
    public static let presencePrefix = "user/"
    public static let presenceSuffix = "/online"

    /// The first levels of every topic the contract has: the broker plugin asks Parley about
    /// these and denies the rest without asking.
    public static let prefixes = [roomPrefix, chatInPrefix, notificationsPrefix, presencePrefix]

    /// The ingest's shared subscriptions: every `chat-in` topic of either form, each message to
    /// one ingest. Two filters that no topic matches both, so no message comes twice.
    public static let ingestSubscriptions = [
        "$share/parley-ingest/\(chatInPrefix)+", "$share/parley-ingest/\(chatInPrefix)+/+",
    ]

    public var name: String {
        switch self {
        case .room(let uid): Self.roomPrefix + uid
        case .chatIn(let uid): Self.chatInPrefix + uid
        case .chatInAs(let uid, let userID): "\(Self.chatInPrefix)\(uid)/\(userID)"
        case .notifications(let userID): "\(Self.notificationsPrefix)\(userID)"
        case .presence(let userID): "\(Self.presencePrefix)\(userID)\(Self.presenceSuffix)"
        }
    }

    /// The topic a name denotes: exactly the contract's levels, a room uid as generated and a
    /// decimal user id; anything else (wildcards, `$`-topics, extra or empty levels) is nil.
    public init?(_ name: String) {
        guard Self.isPlain(name) else { return nil }
        let levels = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (levels.first.map { $0 + "/" }, levels.count) {
        case (Self.roomPrefix, 2) where Self.isRoomUID(levels[1]): self = .room(uid: levels[1])
        case (Self.chatInPrefix, 2) where Self.isRoomUID(levels[1]): self = .chatIn(uid: levels[1])
        case (Self.chatInPrefix, 3) where Self.isRoomUID(levels[1]):
            guard let userID = Self.userID(levels[2]) else { return nil }
            self = .chatInAs(uid: levels[1], userID: userID)
        case (Self.notificationsPrefix, 2):
            guard let userID = Self.userID(levels[1]) else { return nil }
            self = .notifications(userID: userID)
        case (Self.presencePrefix, 3) where "/" + levels[2] == Self.presenceSuffix:
            guard let userID = Self.userID(levels[1]) else { return nil }
            self = .presence(userID: userID)
        default: return nil
        }
    }

    /// The room uid of a `chat-in` topic, and the sender it names (the second form), or nil;
    /// what `Topic(name)` gives for one, cheaper (the ingest asks this for every message).
    public static func chatIn(parsing name: String) -> (uid: String, sender: Int64?)? {
        guard name.hasPrefix(chatInPrefix) else { return nil }
        let rest = name.utf8.dropFirst(chatInPrefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else {
            let uid = String(rest)!
            return isRoomUID(uid) ? (uid, nil) : nil
        }
        let uid = String(rest[..<slash])!
        guard isRoomUID(uid), let sender = userID(String(rest[rest.index(after: slash)...])!) else { return nil }
        return (uid, sender)
    }

    public static func room(_ uid: String) -> String { Topic.room(uid: uid).name }
    public static func chatIn(_ uid: String) -> String { Topic.chatIn(uid: uid).name }
    public static func notifications(_ userID: Int64) -> String { Topic.notifications(userID: userID).name }
    public static func presence(_ userID: Int64) -> String { Topic.presence(userID: userID).name }

    /// No wildcards, no `$`-topics (`$SYS`, `$share`, `$CONTROL`), no empty levels, bounded.
    static func isPlain(_ topic: String) -> Bool {
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

    /// A user id as the broker sees it: positive, in its canonical decimal form (no sign, no
    /// leading zero).
    private static func userID(_ text: String) -> Int64? {
        guard let id = Int64(text), id > 0, String(id) == text else { return nil }
        return id
    }
}
