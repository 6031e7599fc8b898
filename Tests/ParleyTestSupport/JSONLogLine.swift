/// One line of `PARLEY_LOG_FORMAT=json`, as `JSONLogHandler` documents it: `{time, level,
/// label, message, requestId, source, metadata}`, the metadata's values text, lists or objects.
public struct JSONLogLine: Decodable, Sendable {
    public let time: String
    public let level: String
    public let label: String
    public let message: String
    public let requestId: String?
    public let metadata: [String: Value]?

    public enum Value: Decodable, Sendable, Equatable {
        case text(String)
        case list([Value])
        case object([String: Value])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
            } else if let list = try? container.decode([Value].self) {
                self = .list(list)
            } else {
                self = .object(try container.decode([String: Value].self))
            }
        }

        public var text: String? {
            if case .text(let text) = self { text } else { nil }
        }
    }
}
