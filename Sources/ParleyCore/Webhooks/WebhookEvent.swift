import Foundation

/// What a webhook hears: the public names and payloads of the domain events
/// (``DomainEvent``), and the webhooks' own events. A membership change is told as who was
/// added and who removed; an account's sessions ending and its privacy are the server's own
/// business and are not told. A read is told whatever the reader's privacy: the app's server
/// is not another user.
public struct WebhookEvent: Sendable, Equatable {
    /// The names a webhook subscribes to, as `openapi.yaml` lists them with their payloads.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case messageCreated = "message.created"
        case messageEdited = "message.edited"
        case messageDeleted = "message.deleted"
        case reactionChanged = "reaction.changed"
        case readMarkerMoved = "read-marker.moved"
        case receiptChanged = "receipt.changed"
        case roomCreated = "room.created"
        case roomChanged = "room.changed"
        case roomDeleted = "room.deleted"
        case memberAdded = "member.added"
        case memberRemoved = "member.removed"
        case invitationCreated = "invitation.created"
        case userBlocked = "user.blocked"
        case userUnblocked = "user.unblocked"
        case reportFiled = "report.filed"
        /// `POST /v1/admin/webhooks/{id}/ping`: to that webhook only, subscribed or not.
        case webhookPing = "webhook.ping"
        /// Another webhook was disabled after failing for three days.
        case webhookDisabled = "webhook.disabled"
    }

    public let kind: Kind
    /// The room whose events one webhook receives in their order; nil for an account's or a
    /// webhook's event.
    public let roomID: Int64?
    /// The payload's JSON (the body's `data`).
    public let data: String

    public init(kind: Kind, roomID: Int64?, data: String) {
        self.kind = kind
        self.roomID = roomID
        self.data = data
    }

    /// A room's event without the payload's internals: who did what to which room.
    public struct RoomAction: Codable, Sendable, Equatable {
        public let chatRoomId: Int64
        /// The member who did it; 0 for an administrator or the app's server.
        public let byId: Int64
        public var change: RoomChanged.Kind?
        public var userIds: [Int64]?
    }

    public struct WebhookState: Codable, Sendable, Equatable {
        public let webhookId: Int64
        public var url: String?

        public init(webhookId: Int64, url: String? = nil) {
            self.webhookId = webhookId
            self.url = url
        }
    }

    /// The events a domain event is told as (none, one, or for a membership change, those of
    /// who was added and who removed).
    public static func of(_ event: DomainEvent) -> [WebhookEvent] {
        func one(_ kind: Kind, _ room: Int64?, _ value: some Encodable) -> [WebhookEvent] {
            [WebhookEvent(kind: kind, roomID: room, data: json(value))]
        }
        switch event {
        case .messageCreated(let message): return one(.messageCreated, message.chatRoomId, message)
        case .messageEdited(let message): return one(.messageEdited, message.chatRoomId, message)
        case .messageDeleted(let deleted): return one(.messageDeleted, deleted.chatRoomId, deleted)
        case .reactionChanged(let change): return one(.reactionChanged, change.change.chatRoomId, change.change)
        case .readMarkerMoved(let read, _): return one(.readMarkerMoved, read.chatRoomId, read)
        case .receiptChanged(let changed): return one(.receiptChanged, changed.chatRoomId, changed)
        case .roomCreated(let created):
            return one(.roomCreated, created.roomId, RoomAction(chatRoomId: created.roomId, byId: created.byId))
        case .roomChanged(let changed):
            return one(
                .roomChanged, changed.roomId,
                RoomAction(chatRoomId: changed.roomId, byId: changed.byId, change: changed.change))
        case .roomDeleted(let deleted):
            return one(.roomDeleted, deleted.roomId, RoomAction(chatRoomId: deleted.roomId, byId: deleted.byId))
        case .membersChanged(let changed):
            let room = changed.roomId
            return [(Kind.memberAdded, changed.addedIds), (.memberRemoved, changed.removedIds)].flatMap {
                kind, ids -> [WebhookEvent] in
                ids.isEmpty ? [] : one(kind, room, RoomAction(chatRoomId: room, byId: changed.byId, userIds: ids))
            }
        case .invitationCreated(let created): return one(.invitationCreated, created.invitation.room.id, created)
        case .userBlocked(let block): return one(.userBlocked, nil, block)
        case .userUnblocked(let block): return one(.userUnblocked, nil, block)
        case .reportFiled(let report): return one(.reportFiled, report.chatRoomId, report)
        case .sessionsEnded, .privacyChanged: return []
        }
    }

    public static func json(_ value: some Encodable) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
