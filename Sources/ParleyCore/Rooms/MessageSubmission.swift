/// One message to store: what a sender sends to a room (one member of a batch of sends).
public struct MessageSubmission: Sendable, Equatable {
    public let roomID: Int64
    public let senderID: Int64
    public let message: NewMessage
    /// The trace the send belongs to (``PipelineTrace``), recorded with its outbox row.
    public let traceparent: String?
    /// Whether the send takes its sender's message budget (``MessageBudgets``): not a notice
    /// or the app's server sending as a user, which spend their key's.
    public let spendsBudget: Bool

    public init(
        roomID: Int64, senderID: Int64, message: NewMessage, traceparent: String? = nil, spendsBudget: Bool = true
    ) {
        self.roomID = roomID
        self.senderID = senderID
        self.message = message
        self.traceparent = traceparent
        self.spendsBudget = spendsBudget && senderID != Self.systemSender
    }

    /// The sender of a system message (``MessageType/system``), which has none: stored as no
    /// sender, its uid the app's server's retry key in the room.
    public static let systemSender: Int64 = 0

    /// A room notice of the app's server: no sender, no role, no budget but the key's.
    public static func notice(roomID: Int64, message: NewMessage, traceparent: String? = nil) -> MessageSubmission {
        MessageSubmission(roomID: roomID, senderID: systemSender, message: message, traceparent: traceparent)
    }

    public var isNotice: Bool { senderID == Self.systemSender }

    /// Sends with one key are one message: a retry is answered with what the first stored.
    public var key: MessageKey { MessageKey(roomID: roomID, senderID: senderID, uid: message.uid) }

    /// The sender in the room, whose role decides whether the send is allowed.
    public var member: RoomUser { RoomUser(roomID: roomID, userID: senderID) }
}

/// The idempotency key of a message: `(room, sender, uid)`.
public struct MessageKey: Hashable, Sendable {
    public let roomID: Int64
    public let senderID: Int64
    public let uid: String

    public init(roomID: Int64, senderID: Int64, uid: String) {
        self.roomID = roomID
        self.senderID = senderID
        self.uid = uid
    }
}

/// A stored message, and whether this send stored it (`false`: a retry found it stored).
public struct SentMessage: Sendable, Equatable {
    public let message: Message
    public let created: Bool

    public init(message: Message, created: Bool) {
        self.message = message
        self.created = created
    }
}

/// What became of one send of a batch: refused alone (a `ParleyError`), failed, or stored.
public typealias SendOutcome = Result<SentMessage, any Error>
