import Crypto
import Foundation

/// The MQTT envelope of `mqtt-protocol.md`: `{type, data, hash}`.
public struct Envelope<Payload: Encodable & Sendable>: Encodable, Sendable {
    public let type: String
    public let data: Payload
    /// Stable for the same event, so clients drop duplicates of an at-least-once delivery.
    public let hash: String

    public init(type: String, data: Payload, identity: String) {
        self.type = type
        self.data = data
        self.hash = Self.hash(type: type, identity: identity)
    }

    /// The hash an event of `type` and `identity` carries: what a hand-written event uses too.
    public static func hash(type: String, identity: String) -> String {
        SHA256.hash(data: Array("\(type):\(identity)".utf8)).prefix(16).hexString
    }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

/// A client's reading of an event: the hash as sent, not computed again.
extension Envelope: Decodable where Payload: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        type = try container.decode(String.self, forKey: .type)
        data = try container.decode(Payload.self, forKey: .data)
        hash = try container.decode(String.self, forKey: .hash)
    }

    private enum Keys: String, CodingKey { case type, data, hash }
}

/// Server events of the MQTT contract.
public enum RoomEvent {
    public static func newMessage(_ message: Message) -> Envelope<Message> {
        Envelope(type: "new-message-notification", data: message, identity: "\(message.id)")
    }

    public struct Read: Codable, Sendable, Equatable {
        public let messageId: Int64
        public let seq: Int64
        public let userId: Int64
        public let chatRoomId: Int64
        public let readAt: Date

        public init(marker: ReadMarker, userID: Int64, roomID: Int64, at: Date) {
            self.messageId = marker.messageId
            self.seq = marker.seq
            self.userId = userID
            self.chatRoomId = roomID
            self.readAt = at
        }
    }

    public static func read(_ read: Read) -> Envelope<Read> {
        Envelope(
            type: "read-message-notification", data: read,
            identity: "\(read.chatRoomId):\(read.userId):\(read.messageId)")
    }

    public struct Change: Codable, Sendable {
        public let editById: Int64
        public let chatRoomId: Int64
        public let change: String
    }

    /// What a `chatroom-change-notification` says changed: `added` and `removed` go to the users
    /// concerned, the rest to the room's topic (``DomainEvent/delivery(roomUID:)``).
    public enum ChangeKind: String, CaseIterable, Codable, Sendable {
        case renamed, described, members, roles, created, deleted, added, removed, archived, unarchived, avatar
    }

    public static func change(_ change: ChangeKind, roomID: Int64, by userID: Int64, serial: Int64)
        -> Envelope<Change>
    {
        Envelope(
            type: "chatroom-change-notification",
            data: Change(editById: userID, chatRoomId: roomID, change: change.rawValue),
            identity: "\(roomID):\(change.rawValue):\(serial)")
    }
}

/// Work for the `fanout` role: copy one event to the notification topics of users.
public struct FanoutJob: Codable, Sendable, Equatable {
    public enum Audience: String, Codable, Sendable {
        /// Everyone who can read the room, in chunks by user id.
        case readers
        /// Exactly `userIDs`.
        case users
    }

    public let roomID: Int64
    /// The event to copy. Empty in the outbox when it is the row's own event: the relay's
    /// ``FanoutBatch`` carries that once.
    public let event: String
    public let audience: Audience
    public let userIDs: [Int64]
    /// Readers with a larger id remain (large rooms are done in chunks).
    public let afterUserID: Int64
    /// Pushes to queue for the same users; `nil` for events that push nobody.
    public let push: PushIntent?
    /// Only the pushes remain to be done (the event went out; queuing them failed once).
    public let pushesOnly: Bool?
    /// The room's readers version when the relay read the event (`chat_room.readers_version`,
    /// which every change of who can read the room moves forward in its transaction): readers
    /// read at this version or later are still right for it. `nil`: read them now.
    public let readersVersion: Int64?
    /// The push tokens' version when the relay read the event
    /// (`notifications.push_token_version`, moved forward by every token registered or
    /// removed): who had no token at this version or later has none for this event either.
    /// `nil`: ask.
    public let pushTokensVersion: Int64?
    /// The trace of the message the event is about (``PipelineTrace``): the step that queued
    /// the job's span.
    public var traceparent: String?

    public init(
        roomID: Int64, event: String, audience: Audience, userIDs: [Int64] = [], afterUserID: Int64 = 0,
        push: PushIntent? = nil, pushesOnly: Bool? = nil, readersVersion: Int64? = nil, pushTokensVersion: Int64? = nil,
        traceparent: String? = nil
    ) {
        self.roomID = roomID
        self.event = event
        self.audience = audience
        self.userIDs = userIDs
        self.afterUserID = afterUserID
        self.push = push
        self.pushesOnly = pushesOnly
        self.readersVersion = readersVersion
        self.pushTokensVersion = pushTokensVersion
        self.traceparent = traceparent
    }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// A new message's job, made by the relay beside its event: the event is not copied into
    /// the job, as the relay's ``FanoutBatch`` carries it once. A message deleted before the
    /// relay read it pushes nobody.
    public static func newMessage(
        _ message: Message, readersVersion: Int64? = nil, pushTokensVersion: Int64? = nil, traceparent: String? = nil
    ) -> FanoutJob {
        FanoutJob(
            roomID: message.chatRoomId, event: "", audience: .readers,
            push: message.deletedAt == nil ? .message(message) : nil,
            readersVersion: readersVersion, pushTokensVersion: pushTokensVersion, traceparent: traceparent)
    }

    /// The same job for `event` (a batch's job whose event is its outbox row's).
    public func with(event: String) -> FanoutJob {
        FanoutJob(
            roomID: roomID, event: event, audience: audience, userIDs: userIDs, afterUserID: afterUserID, push: push,
            pushesOnly: pushesOnly, readersVersion: readersVersion, pushTokensVersion: pushTokensVersion,
            traceparent: traceparent)
    }
}
