import Foundation

/// What happened in Parley, as everything after a change hears of it: repositories record these
/// in the outbox with the change they describe, and the relay delivers each one
/// (``DomainEvent/delivery(roomUID:)``) to MQTT topics, to users' notification topics and pushes
/// through fan-out, and to the broker plugin. The vocabulary is closed: a new event is a case
/// every consumer's `switch` has to answer (see <doc:DomainEvents>).
public enum DomainEvent: Sendable, Equatable {
    /// Stored by a send: its outbox row names the message, which the relay reads
    /// (``EventDelivery/newMessage(_:readersVersion:pushTokensVersion:traceparent:)``).
    case messageCreated(Message)
    case messageEdited(Message)
    case messageDeleted(RoomEvent.Deleted)
    case reactionChanged(ReactionChange)
    /// `hidden`: the reader shares no read state (``Privacy/ReadReceipts/nobody``), so the room
    /// hears nothing; their own devices still clear the room.
    case readMarkerMoved(RoomEvent.Read, hidden: Bool = false)
    /// A member's devices received more of the room (delivery receipts).
    case receiptChanged(RoomEvent.ReceiptChanged)
    case roomCreated(RoomCreated)
    /// Renamed, described, archived, unarchived, or a new avatar.
    case roomChanged(RoomChanged)
    case roomDeleted(RoomDeleted)
    /// Who can read the room, or their roles, changed (directly, or through a group or an
    /// application role).
    case membersChanged(MembersChanged)
    case invitationCreated(InvitationCreated)
    case userBlocked(Blocking)
    case userUnblocked(Blocking)
    /// Sessions signed out (their MQTT tokens refused, their clients disconnected).
    case sessionsEnded(SessionsEnded)
    case reportFiled(ReportFiled)
    /// A user changed what others see of them.
    case privacyChanged(PrivacyChanged)

    /// Each event's name, as the outbox records it and later consumers (webhooks) name it.
    public enum Name: String, CaseIterable, Codable, Sendable {
        case messageCreated = "message.created"
        case messageEdited = "message.edited"
        case messageDeleted = "message.deleted"
        case reactionChanged = "reaction.changed"
        case readMarkerMoved = "read-marker.moved"
        case receiptChanged = "receipt.changed"
        case roomCreated = "room.created"
        case roomChanged = "room.changed"
        case roomDeleted = "room.deleted"
        case membersChanged = "members.changed"
        case invitationCreated = "invitation.created"
        case userBlocked = "user.blocked"
        case userUnblocked = "user.unblocked"
        case sessionsEnded = "sessions.ended"
        case reportFiled = "report.filed"
        case privacyChanged = "privacy.changed"
    }

    public var name: Name {
        switch self {
        case .messageCreated: .messageCreated
        case .messageEdited: .messageEdited
        case .messageDeleted: .messageDeleted
        case .reactionChanged: .reactionChanged
        case .readMarkerMoved: .readMarkerMoved
        case .receiptChanged: .receiptChanged
        case .roomCreated: .roomCreated
        case .roomChanged: .roomChanged
        case .roomDeleted: .roomDeleted
        case .membersChanged: .membersChanged
        case .invitationCreated: .invitationCreated
        case .userBlocked: .userBlocked
        case .userUnblocked: .userUnblocked
        case .sessionsEnded: .sessionsEnded
        case .reportFiled: .reportFiled
        case .privacyChanged: .privacyChanged
        }
    }

    /// The room the event concerns; nil for an account's events (blocks, sessions).
    public var roomID: Int64? {
        switch self {
        case .messageCreated(let message), .messageEdited(let message): message.chatRoomId
        case .messageDeleted(let deleted): deleted.chatRoomId
        case .reactionChanged(let change): change.change.chatRoomId
        case .readMarkerMoved(let read, _): read.chatRoomId
        case .receiptChanged(let changed): changed.chatRoomId
        case .roomCreated(let created): created.roomId
        case .roomChanged(let changed): changed.roomId
        case .roomDeleted(let deleted): deleted.roomId
        case .membersChanged(let changed): changed.roomId
        case .invitationCreated(let created): created.invitation.room.id
        case .reportFiled(let report): report.chatRoomId
        case .userBlocked, .userUnblocked, .sessionsEnded, .privacyChanged: nil
        }
    }
}

/// The outbox's form of an event: its name and its payload as JSON.
extension DomainEvent {
    public func payload() -> String {
        switch self {
        case .messageCreated(let message), .messageEdited(let message): Self.json(message)
        case .messageDeleted(let deleted): Self.json(deleted)
        case .reactionChanged(let change): Self.json(change)
        case .readMarkerMoved(let read, let hidden): Self.json(StoredRead(read: read, hidden: hidden))
        case .receiptChanged(let changed): Self.json(changed)
        case .roomCreated(let created): Self.json(created)
        case .roomChanged(let changed): Self.json(changed)
        case .roomDeleted(let deleted): Self.json(deleted)
        case .membersChanged(let changed): Self.json(changed)
        case .invitationCreated(let created): Self.json(created)
        case .userBlocked(let block), .userUnblocked(let block): Self.json(block)
        case .sessionsEnded(let ended): Self.json(ended)
        case .reportFiled(let report): Self.json(report)
        case .privacyChanged(let changed): Self.json(changed)
        }
    }

    /// The event an outbox row records.
    public init(name: Name, payload: String) throws {
        let data = Data(payload.utf8)
        func read<T: Decodable>(_ type: T.Type) throws -> T { try JSONCoding.decoder.decode(type, from: data) }
        switch name {
        case .messageCreated: self = .messageCreated(try read(Message.self))
        case .messageEdited: self = .messageEdited(try read(Message.self))
        case .messageDeleted: self = .messageDeleted(try read(RoomEvent.Deleted.self))
        case .reactionChanged: self = .reactionChanged(try read(ReactionChange.self))
        case .readMarkerMoved:
            self = .readMarkerMoved(
                try read(RoomEvent.Read.self), hidden: try read(StoredRead.Flag.self).hidden ?? false)
        case .receiptChanged: self = .receiptChanged(try read(RoomEvent.ReceiptChanged.self))
        case .roomCreated: self = .roomCreated(try read(RoomCreated.self))
        case .roomChanged: self = .roomChanged(try read(RoomChanged.self))
        case .roomDeleted: self = .roomDeleted(try read(RoomDeleted.self))
        case .membersChanged: self = .membersChanged(try read(MembersChanged.self))
        case .invitationCreated: self = .invitationCreated(try read(InvitationCreated.self))
        case .userBlocked: self = .userBlocked(try read(Blocking.self))
        case .userUnblocked: self = .userUnblocked(try read(Blocking.self))
        case .sessionsEnded: self = .sessionsEnded(try read(SessionsEnded.self))
        case .reportFiled: self = .reportFiled(try read(ReportFiled.self))
        case .privacyChanged: self = .privacyChanged(try read(PrivacyChanged.self))
        }
    }

    private static func json(_ value: some Encodable) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(value)) ?? Data(), as: UTF8.self)
    }
}

/// A read's outbox payload: the room's event, and `"hidden": true` when the reader shares no
/// read state (absent otherwise, so rows recorded before it read as shared).
private struct StoredRead: Encodable {
    let read: RoomEvent.Read
    let hidden: Bool

    struct Flag: Decodable { let hidden: Bool? }

    func encode(to encoder: any Encoder) throws {
        try read.encode(to: encoder)
        guard hidden else { return }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(true, forKey: .hidden)
    }

    enum CodingKeys: String, CodingKey { case hidden }
}
