import Foundation

/// What happened in a room, as ``ParleyClient/messages(in:)`` tells it: each new message
/// once, in `seq` order, whether it came on the room's topic, the notification topic or the
/// history fetched after a reconnect.
public enum ParleyEvent: Sendable, Hashable {
    case new(ParleyMessage)
    /// The whole message after the edit.
    case edited(ParleyMessage)
    case deleted(messageID: Int, seq: Int, roomID: Int, at: Date)
    case reaction(messageID: Int, roomID: Int, key: String, userID: Int, added: Bool, count: Int)
    /// `userID` read the room up to `seq`.
    case read(roomID: Int, userID: Int, seq: Int)
    case typing(roomID: Int, userID: Int, creating: Bool)
    /// The room changed (renamed, members, archived…): the room list has it afresh.
    case roomChanged(roomID: Int, change: String)
    /// The server refused a message this user published.
    case rejected(ParleyRejection)

    /// The room the event belongs to; nil for a rejection that names none.
    public var roomID: Int? {
        switch self {
        case .new(let message), .edited(let message): message.roomID
        case .deleted(_, _, let roomID, _), .reaction(_, let roomID, _, _, _, _), .read(let roomID, _, _),
            .typing(let roomID, _, _), .roomChanged(let roomID, _):
            roomID
        case .rejected(let rejection): rejection.roomID
        }
    }
}

/// The server's refusal of a message: a `message-rejected` over MQTT, or a problem answer to
/// the REST send.
public struct ParleyRejection: Error, Sendable, Hashable {
    public var roomID: Int?
    public var uid: String?
    /// The REST API's problem code: `forbidden`, `blocked`, `rate-limited`, `too-large`…
    public var code: String
    public var reason: String
    /// With `rate-limited`: seconds until a send would be taken.
    public var retryAfter: Int?

    public init(roomID: Int?, uid: String?, code: String, reason: String, retryAfter: Int? = nil) {
        self.roomID = roomID
        self.uid = uid
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
    }
}

/// A server event as it comes on a topic: the envelope `{type, data, hash}`.
enum ServerEvent: Sendable, Hashable {
    case event(ParleyEvent)
    /// A busy room's window ended (notification topic): the newest message and the counts.
    case summary(roomID: Int, seq: Int, unread: Int, unreadMentions: Int)
    /// The user read the room up to `readSeq` on some device.
    case cleared(roomID: Int, readSeq: Int)
    /// Nothing the client shows (presence, an invitation, a receipt, a type it does not know).
    case other

    private struct Envelope<Data: Decodable>: Decodable {
        let type: String
        let data: Data
    }

    /// The envelope without its body: what kind of event, and its `hash` (repeats share it).
    private struct Kind: Decodable {
        let type: String
        let hash: String?
    }

    private struct Deleted: Decodable {
        let id: Int
        let seq: Int
        let chatRoomId: Int
        let deletedAt: Date
    }

    private struct Reaction: Decodable {
        let messageId: Int
        let chatRoomId: Int
        let key: String
        let userId: Int
        let added: Bool
        let count: Int
    }

    private struct Read: Decodable {
        let seq: Int
        let userId: Int
        let chatRoomId: Int
    }

    private struct Typing: Decodable {
        let userId: Int
        let chatRoomId: Int
        let creating: Bool
    }

    private struct RoomChange: Decodable {
        let chatRoomId: Int
        let change: String
    }

    private struct Rejected: Decodable {
        let chatRoomId: Int?
        let uid: String?
        let code: String
        let reason: String
        let retryAfter: Int?
    }

    private struct Summary: Decodable {
        let chatRoomId: Int
        let seq: Int
        let unreadCount: Int
        let unreadMentionCount: Int
    }

    private struct Cleared: Decodable {
        let chatRoomId: Int
        let readSeq: Int
    }

    private struct Edited: Decodable { let message: ParleyMessage }

    /// Reads a payload; throws only for a payload that is not the contract's.
    static func decode(_ payload: [UInt8]) throws -> ServerEvent { try read(payload).event }

    /// Reads a payload and its envelope's `hash` (nil when it has none).
    static func read(_ payload: [UInt8]) throws -> (event: ServerEvent, hash: String?) {
        let data = Data(payload)
        let kind = try ContractJSON.decoder.decode(Kind.self, from: data)
        return (try event(kind.type, in: data), kind.hash)
    }

    private static func event(_ type: String, in data: Data) throws -> ServerEvent {
        let decoder = ContractJSON.decoder
        func body<T: Decodable>(_: T.Type) throws -> T { try decoder.decode(Envelope<T>.self, from: data).data }
        switch type {
        case "new-message-notification":
            return .event(.new(try body(ParleyMessage.self)))
        case "message-edited":
            return .event(.edited(try body(Edited.self).message))
        case "message-deleted":
            let deleted = try body(Deleted.self)
            return .event(
                .deleted(messageID: deleted.id, seq: deleted.seq, roomID: deleted.chatRoomId, at: deleted.deletedAt))
        case "reaction-changed":
            let reaction = try body(Reaction.self)
            return .event(
                .reaction(
                    messageID: reaction.messageId, roomID: reaction.chatRoomId, key: reaction.key,
                    userID: reaction.userId, added: reaction.added, count: reaction.count))
        case "read-message-notification":
            let read = try body(Read.self)
            return .event(.read(roomID: read.chatRoomId, userID: read.userId, seq: read.seq))
        case "creating-message-info":
            let typing = try body(Typing.self)
            return .event(.typing(roomID: typing.chatRoomId, userID: typing.userId, creating: typing.creating))
        case "chatroom-change-notification":
            let change = try body(RoomChange.self)
            return .event(.roomChanged(roomID: change.chatRoomId, change: change.change))
        case "message-rejected":
            let rejected = try body(Rejected.self)
            return .event(
                .rejected(
                    ParleyRejection(
                        roomID: rejected.chatRoomId, uid: rejected.uid, code: rejected.code, reason: rejected.reason,
                        retryAfter: rejected.retryAfter)))
        case "room-summary":
            let summary = try body(Summary.self)
            return .summary(
                roomID: summary.chatRoomId, seq: summary.seq, unread: summary.unreadCount,
                unreadMentions: summary.unreadMentionCount)
        case "notification-cleared":
            let cleared = try body(Cleared.self)
            return .cleared(roomID: cleared.chatRoomId, readSeq: cleared.readSeq)
        default:
            return .other
        }
    }
}

/// The contract's JSON: timestamps RFC 3339 in UTC, with or without milliseconds.
enum ContractJSON {
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try RFC3339Dates().decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
