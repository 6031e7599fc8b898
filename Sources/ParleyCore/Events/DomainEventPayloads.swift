import Foundation

// The payloads of ``DomainEvent`` that are not already events of the MQTT contract. Ids are the
// contract's (`roomId`, `userIds`), so a later consumer (webhooks) can hand them on as they are.

/// A reaction added or taken back, and when (which tells one toggle from the next).
public struct ReactionChange: Codable, Sendable, Equatable {
    public let change: RoomEvent.ReactionChanged
    public let at: Date

    public init(_ change: RoomEvent.ReactionChanged, at: Date) {
        self.change = change
        self.at = at
    }
}

public struct RoomCreated: Codable, Sendable, Equatable {
    public let roomId: Int64
    public let byId: Int64
    /// Members told on their own topic that they were added.
    public let notifiedIds: [Int64]
    /// Whether being added is pushed to them: not when the room's first message is, at once.
    public let pushed: Bool

    public init(roomId: Int64, byId: Int64, notifiedIds: [Int64], pushed: Bool) {
        self.roomId = roomId
        self.byId = byId
        self.notifiedIds = notifiedIds
        self.pushed = pushed
    }
}

public struct RoomChanged: Codable, Sendable, Equatable {
    /// The changes of a room's own attributes, told on its topic.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case renamed, described, archived, unarchived, avatar
    }

    public let roomId: Int64
    public let byId: Int64
    public let change: Kind
    /// Keeps changes of the same kind apart (the room's `updated_at` in microseconds).
    public let serial: Int64

    public init(roomId: Int64, byId: Int64, change: Kind, serial: Int64) {
        self.roomId = roomId
        self.byId = byId
        self.change = change
        self.serial = serial
    }
}

public struct RoomDeleted: Codable, Sendable, Equatable {
    public let roomId: Int64
    public let byId: Int64
    public let serial: Int64
    /// Who could read the room: told on their own topic, which does not depend on the membership
    /// just ended, and no longer let in by the broker.
    public let memberIds: [Int64]

    public init(roomId: Int64, byId: Int64, serial: Int64, memberIds: [Int64]) {
        self.roomId = roomId
        self.byId = byId
        self.serial = serial
        self.memberIds = memberIds
    }
}

public struct MembersChanged: Codable, Sendable, Equatable {
    public let roomId: Int64
    /// 0 for a change of the directory (a group's or an application role's members).
    public let byId: Int64
    public let serial: Int64
    /// Readers who were not readers before, and readers who are not any more; both empty when
    /// only roles changed.
    public let addedIds: [Int64]
    public let removedIds: [Int64]

    public init(roomId: Int64, byId: Int64, serial: Int64, addedIds: [Int64], removedIds: [Int64]) {
        self.roomId = roomId
        self.byId = byId
        self.serial = serial
        self.addedIds = addedIds
        self.removedIds = removedIds
    }
}

public struct InvitationCreated: Codable, Sendable, Equatable {
    public let inviteeId: Int64
    public let invitation: Invitation

    public init(inviteeId: Int64, invitation: Invitation) {
        self.inviteeId = inviteeId
        self.invitation = invitation
    }
}

public struct Blocking: Codable, Sendable, Equatable {
    public let blockerId: Int64
    public let blockedId: Int64

    public init(blockerId: Int64, blockedId: Int64) {
        self.blockerId = blockerId
        self.blockedId = blockedId
    }
}

public struct SessionsEnded: Codable, Sendable, Equatable {
    public let sessionIds: [Int64]
    /// The MQTT clients of those sessions, to disconnect.
    public let clientIds: [String]

    public init(sessionIds: [Int64], clientIds: [String]) {
        self.sessionIds = sessionIds
        self.clientIds = clientIds
    }
}

public struct ReportFiled: Codable, Sendable, Equatable {
    public let id: Int64
    public let messageId: Int64
    public let chatRoomId: Int64
    public let reporterId: Int64
    public let reason: String

    public init(id: Int64, messageId: Int64, chatRoomId: Int64, reporterId: Int64, reason: String) {
        self.id = id
        self.messageId = messageId
        self.chatRoomId = chatRoomId
        self.reporterId = reporterId
        self.reason = reason
    }
}
