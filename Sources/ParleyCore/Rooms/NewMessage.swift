/// A message as a client submits it: the one declaration of a message's fields for REST
/// bodies (`POST .../messages`, a room's `firstMessage`), `chat-in` payloads and the server API.
public struct NewMessage: Sendable, Equatable, Decodable {
    public static let maximumAttachments = 10

    public let content: String
    public let uid: String
    public let type: MessageType
    public let metadata: MessageMetadata?
    /// Files the sender uploaded, in the order shown.
    public let attachments: [Int64]
    /// The message of the same room this one answers.
    public let replyToId: Int64?
    /// Distinct users named, in the order given.
    public let mentions: [Int64]

    /// Checks the limits of the contract: content up to 20,000 characters (empty only beside a
    /// file), uid 1 to 64, at most 10 distinct files and 50 distinct mentions. Whether the
    /// files are the sender's, the reply's target is in the room and the mentioned users are
    /// members is checked where the message is stored.
    public init(
        content: String, uid: String, fileId: Int64? = nil, replyToId: Int64? = nil, mentions: [Int64]? = nil,
        type: MessageType = .text, metadata: MessageMetadata? = nil, attachments: [Int64]? = nil,
        fieldPrefix: String = ""
    ) throws {
        if fileId != nil, attachments != nil {
            throw ParleyError.invalidRequest(
                "give fileId or attachments, not both", field: fieldPrefix + "attachments")
        }
        let files = attachments ?? fileId.map { [$0] } ?? []
        guard files.count <= Self.maximumAttachments else {
            throw ParleyError.invalidRequest(
                "at most \(Self.maximumAttachments) files may be attached", field: fieldPrefix + "attachments")
        }
        guard Set(files).count == files.count else {
            throw ParleyError.invalidRequest("each file may be attached once", field: fieldPrefix + "attachments")
        }
        try MessageText.check(content, hasFile: !files.isEmpty, field: fieldPrefix + "content")
        guard (1...64).contains(uid.unicodeScalars.count),
            uid.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParleyError.invalidRequest("uid must be 1 to 64 printable characters", field: fieldPrefix + "uid")
        }
        self.content = content
        self.uid = uid
        self.type = type
        self.metadata = metadata
        self.attachments = files
        self.replyToId = replyToId
        self.mentions = try MessageText.mentions(mentions ?? [], field: fieldPrefix + "mentions")
    }

    /// A user's message: `type` is `text` or the app's own. A missing `content` is empty (a
    /// file alone); the errors name fields by their path in the body (`firstMessage.uid`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath.map(\.stringValue).joined(separator: ".")
        let prefix = path.isEmpty ? "" : path + "."
        self = try Self.submitted(
            content: try container.decodeIfPresent(String.self, forKey: .content),
            uid: try container.decodeIfPresent(String.self, forKey: .uid),
            fileId: try container.decodeIfPresent(Int64.self, forKey: .fileId),
            replyToId: try container.decodeIfPresent(Int64.self, forKey: .replyToId),
            mentions: try container.decodeIfPresent([Int64].self, forKey: .mentions),
            type: try container.decodeIfPresent(String.self, forKey: .type),
            metadata: { try container.decodeIfPresent(MessageMetadata.self, forKey: .metadata) },
            attachments: { try container.decodeIfPresent([Int64].self, forKey: .attachments) }, fieldPrefix: prefix)
    }

    /// A user's message from the fields its body or `data` gives (nil where absent), as
    /// ``init(from:)`` and ``PlainMessageReader`` both read them. The type is checked before
    /// the metadata and attachments are read, so a body wrong in several names the same field
    /// whichever of the two reads it.
    static func submitted(
        content: String?, uid: String?, fileId: Int64?, replyToId: Int64?, mentions: [Int64]?, type: String?,
        metadata: () throws -> MessageMetadata?, attachments: () throws -> [Int64]?, fieldPrefix: String
    ) throws -> NewMessage {
        try NewMessage(
            content: content ?? "", uid: uid ?? "", fileId: fileId, replyToId: replyToId, mentions: mentions,
            type: try type.map { try MessageType(sentByUser: $0, field: fieldPrefix + "type") } ?? .text,
            metadata: try metadata(), attachments: try attachments(), fieldPrefix: fieldPrefix)
    }

    /// A room notice of the app's server (`sentBy: "system"`): text and metadata, no file,
    /// reply or mention.
    public static func notice(content: String, uid: String, metadata: MessageMetadata?) throws -> NewMessage {
        try NewMessage(content: content, uid: uid, type: .system, metadata: metadata)
    }

    enum CodingKeys: String, CodingKey {
        case content, uid, type, metadata, fileId, attachments, replyToId, mentions
    }

    /// The message of a body as a stock client writes it, or its refusal, read from its bytes
    /// (``PlainMessageReader``) as `JSONDecoder` would read it; nil for any other body, which
    /// the decoder must read. The body has passed ``StrictJSON/check(_:)``.
    public static func plain(_ body: [UInt8]) -> Result<NewMessage, any Error>? {
        PlainMessageReader.message(body)
    }

    /// The first file, which clients before attachments read as the message's one file.
    public var fileId: Int64? { attachments.first }

    /// A plain text message: no file, reply, mention or metadata (what the one-statement store
    /// takes).
    public var isPlain: Bool {
        attachments.isEmpty && replyToId == nil && mentions.isEmpty && type == .text && metadata == nil
    }
}

/// The rules for what a message says, shared by sends and edits.
public enum MessageText {
    /// Content of up to 20,000 characters; empty only beside a file.
    public static func check(_ content: String, hasFile: Bool, field: String) throws {
        _ = try TextRule.validated(content, field: field, length: 0...20_000)
        guard !content.isEmpty || hasFile else {
            throw ParleyError.invalidRequest("a message needs content or a file", field: field)
        }
    }

    /// The distinct ids, first occurrence first; at most 50.
    public static func mentions(_ ids: [Int64], field: String) throws -> [Int64] {
        var seen = Set<Int64>()
        let distinct = ids.filter { seen.insert($0).inserted }
        guard distinct.count <= 50 else {
            throw ParleyError.invalidRequest("at most 50 distinct users may be mentioned", field: field)
        }
        return distinct
    }
}
