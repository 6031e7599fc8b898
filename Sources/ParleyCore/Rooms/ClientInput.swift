import Foundation

/// What clients publish on `chat-in/{roomUid}` (`mqtt-protocol.md`, client → server).
public struct ClientEnvelope: Decodable, Sendable {
    /// The fields of the notices (typing, read markers); a message's are ``NewMessage``'s.
    public struct Data: Decodable, Sendable {
        public let chatRoomId: Int64?
        public let uid: String?
        public let messageId: Int64?
        public let seq: Int64?
        public let creating: Bool?
        public let time: String?
    }

    public static let newMessageType = "new-message-notification"

    public let type: String
    public let data: Data
    public let hash: String?
    /// A `new-message-notification`'s message, or why it is refused: a refusal names the
    /// payload's uid (``Data/uid``) instead of failing the whole envelope.
    public let message: Result<NewMessage, any Error>?

    init(type: String, data: Data, hash: String?, message: Result<NewMessage, any Error>?) {
        self.type = type
        self.data = data
        self.hash = hash
        self.message = message
    }

    /// The envelope of a payload ``StrictJSON`` let through, or nil when it is none: a stock
    /// client's read from its bytes (``PlainMessageReader``), any other by `JSONDecoder`.
    public static func decode(_ payload: [UInt8]) -> ClientEnvelope? {
        PlainMessageReader.envelope(payload)
            ?? (try? JSONCoding.decoder.decode(ClientEnvelope.self, from: Foundation.Data(payload)))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        data = try container.decode(Data.self, forKey: .data)
        hash = try container.decodeIfPresent(String.self, forKey: .hash)
        message =
            type == Self.newMessageType
            ? Result {
                do {
                    return try container.decode(NewMessage.self, forKey: .data)
                } catch let error as ParleyError {
                    throw error
                } catch {
                    throw Self.refusal(error)
                }
            } : nil
    }

    /// A message field of the wrong type, or text JSON cannot hold (a lone surrogate), is the
    /// client's mistake: `invalid-request` naming the field, as REST names it.
    static func refusal(_ error: any Error) -> ParleyError {
        let context: DecodingError.Context? =
            switch error as? DecodingError {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                context
            case .keyNotFound(_, let context): context
            default: nil
            }
        let field = context.map { $0.codingPath.map(\.stringValue).joined(separator: ".") } ?? "data"
        return ParleyError.invalidRequest("\(field) is not what a message carries there.", field: field)
    }

    enum CodingKeys: String, CodingKey { case type, data, hash }
}

/// One publish on `chat-in/{roomUid}` or `chat-in/{roomUid}/{userId}` as the ingest receives it.
public struct ChatInput: Sendable {
    public let topic: String
    public let payload: [UInt8]
    /// The `parley-user` property the broker plugin stamps: the sender's user id.
    public let sender: String?

    public init(topic: String, payload: [UInt8], sender: String?) {
        self.topic = topic
        self.payload = payload
        self.sender = sender
    }
}

/// What vouches for the sender of a `chat-in` message: never its payload.
public enum ChatInSender: String, Sendable, CaseIterable {
    /// Parley's mosquitto plugin, which stamps `parley-user` on every `chat-in` message (and
    /// drops one a client stamped itself). A topic that names a sender must name that one.
    case plugin
    /// The topic's `{userId}` level, which the broker's ACL lets only that user write (any
    /// broker calling Parley's HTTP authorisation). `parley-user` is then the client's own
    /// and ignored; a topic without the level has no sender and is dropped.
    case topic

    /// The sender of `input` to the room `topicSender`'s topic names, or why there is none.
    public func sender(of input: ChatInput, topicSender: Int64?) -> ChatInSenderDecision {
        switch self {
        case .plugin:
            guard let stamped = input.sender.flatMap(Int64.init) else { return .unknown }
            return topicSender == nil || topicSender == stamped ? .sender(stamped) : .mismatched(stamped)
        case .topic:
            return topicSender.map { .sender($0) } ?? .unknown
        }
    }
}

public enum ChatInSenderDecision: Sendable, Equatable {
    case sender(Int64)
    /// Nobody vouches for a sender: nobody to answer either.
    case unknown
    /// The plugin's sender published to another user's topic (the ACL refuses that; a
    /// broker that did not is answered with `forbidden`).
    case mismatched(Int64)
}

extension RoomEvent {
    public struct Typing: Codable, Sendable {
        public let userId: Int64
        public let chatRoomId: Int64
        public let creating: Bool
        public let time: Date
    }

    public static func typing(userID: Int64, roomID: Int64, creating: Bool, at time: Date) -> Envelope<Typing> {
        Envelope(
            type: "creating-message-info",
            data: Typing(userId: userID, chatRoomId: roomID, creating: creating, time: time),
            identity: "\(roomID):\(userID):\(creating):\(time.timeIntervalSince1970)")
    }

    public struct Rejection: Codable, Sendable {
        @NullEncoded public var chatRoomId: Int64?
        @NullEncoded public var uid: String?
        /// One of the REST API's codes: clients branch on one vocabulary.
        public let code: ParleyError.Code
        public let reason: String
        /// With `rate-limited`: seconds until a publish would be taken; absent otherwise.
        public var retryAfter: Int? = nil
    }

    /// The negative acknowledgement of a `chat-in` publish, on the sender's notification topic.
    public static func rejected(
        roomID: Int64?, uid: String?, code: ParleyError.Code, reason: String, hash: String?, retryAfter: Int? = nil
    )
        -> Envelope<Rejection>
    {
        Envelope(
            type: "message-rejected",
            data: Rejection(chatRoomId: roomID, uid: uid, code: code, reason: reason, retryAfter: retryAfter),
            identity: "\(roomID ?? 0):\(uid ?? ""):\(hash ?? UUID().uuidString)")
    }
}
