/// A message as a client submits it.
public struct NewMessage: Sendable, Equatable {
    public let content: String
    public let uid: String
    public let fileId: Int64?
    /// The message of the same room this one answers.
    public let replyToId: Int64?
    /// Distinct users named, in the order given.
    public let mentions: [Int64]

    /// Checks the limits of the contract: content up to 20,000 characters, uid 1 to 64, at
    /// most 50 distinct mentions. Whether the reply's target and the mentioned users fit the
    /// room is checked where the message is stored.
    public init(
        content: String, uid: String, fileId: Int64?, replyToId: Int64? = nil, mentions: [Int64]? = nil,
        fieldPrefix: String = ""
    ) throws {
        try MessageText.check(content, hasFile: fileId != nil, field: fieldPrefix + "content")
        guard (1...64).contains(uid.unicodeScalars.count),
            uid.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParleyError.invalidRequest("uid must be 1 to 64 printable characters", field: fieldPrefix + "uid")
        }
        self.content = content
        self.uid = uid
        self.fileId = fileId
        self.replyToId = replyToId
        self.mentions = try MessageText.mentions(mentions ?? [], field: fieldPrefix + "mentions")
    }

    /// A plain message: no file, no reply, no mention (what the one-statement store takes).
    public var isPlain: Bool { fileId == nil && replyToId == nil && mentions.isEmpty }
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
