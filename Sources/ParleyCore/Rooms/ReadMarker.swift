/// Where a member has read up to in a room: a message, named by its id and its `seq`.
public struct ReadMarker: Sendable, Equatable, Codable {
    public let messageId: Int64
    public let seq: Int64

    public init(messageId: Int64, seq: Int64) {
        self.messageId = messageId
        self.seq = seq
    }

    /// The message a client moves its marker to: by id, or by `seq` (what history pages by).
    public enum Target: Sendable, Equatable {
        case message(Int64)
        case seq(Int64)

        /// From a request's `messageId` and `seq`: exactly one of them.
        public init(messageId: Int64?, seq: Int64?) throws {
            switch (messageId, seq) {
            case (let id?, nil): self = .message(id)
            case (nil, let seq?): self = .seq(seq)
            default: throw ParleyError.invalidRequest("Give exactly one of messageId and seq.", field: "messageId")
            }
        }

        /// The request field that names it.
        public var field: String {
            switch self {
            case .message: "messageId"
            case .seq: "seq"
            }
        }
    }
}
