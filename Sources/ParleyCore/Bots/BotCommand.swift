import Foundation

/// A message addressed to a bot: its content starts with `/{name}` (any case) followed by a
/// space or the end. Which bot, if any, hears it is the store's to say: one of that name, with
/// a webhook, that is a member of the room and did not send the message itself.
public struct BotCommand: Sendable, Equatable {
    /// The event's id: a command's delivery id is made of it, so a command queued twice is
    /// sent once.
    public let eventID: String
    public let roomID: Int64
    public let senderID: Int64
    /// Lowercased, without the `/`.
    public let botName: String
    /// What follows the name, without the spaces between.
    public let args: String
    /// The message's JSON, as the `message.created` event carries it.
    public let message: String

    public init(eventID: String, roomID: Int64, senderID: Int64, botName: String, args: String, message: String) {
        self.eventID = eventID
        self.roomID = roomID
        self.senderID = senderID
        self.botName = botName
        self.args = args
        self.message = message
    }

    /// The command a `message.created` event carries, if its content is one (a notice, which
    /// has no sender, never is).
    public static func of(_ event: QueuedWebhookEvent) -> BotCommand? {
        guard event.type == .messageCreated, event.data.contains(#""content":"/"#),
            let said = try? JSONCoding.decoder.decode(Said.self, from: Data(event.data.utf8)),
            let senderID = said.sentById, let (name, args) = parse(said.content)
        else { return nil }
        return BotCommand(
            eventID: event.id, roomID: said.chatRoomId, senderID: senderID, botName: name, args: args,
            message: event.data)
    }

    /// `/name args…` → (`name` lowercased, `args`); nil when the content is no command.
    public static func parse(_ content: String) -> (name: String, args: String)? {
        guard content.hasPrefix("/") else { return nil }
        let rest = content.dropFirst()
        let word = rest.prefix { !$0.isWhitespace }
        let name = word.lowercased()
        guard Bot.isValidName(name) else { return nil }
        let args = rest.dropFirst(word.count).drop { $0.isWhitespace }
        return (name, String(args))
    }

    private struct Said: Decodable {
        let chatRoomId: Int64
        let sentById: Int64?
        let content: String
    }
}

/// What a bot answers a command: a message it says in the room (an empty answer says nothing).
public struct BotAnswer: Sendable, Equatable, Decodable {
    public let content: String
    public let metadata: MessageMetadata?

    /// The message of an answer's body; nil for an empty body. Anything else than
    /// `{content, metadata?}` is refused.
    public static func message(of body: Data, uid: String) throws -> NewMessage? {
        guard body.contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else { return nil }
        let answer: BotAnswer
        do {
            answer = try JSONCoding.decoder.decode(BotAnswer.self, from: body)
        } catch {
            throw ParleyError.invalidRequest("the answer is not JSON {content, metadata?}", field: "content")
        }
        return try NewMessage(content: answer.content, uid: uid, metadata: answer.metadata)
    }
}
