import Foundation
import Glibc
import Logging
import ParleyAPI
import ParleyCore

/// `PARLEY_LOG_FORMAT=json`: one JSON object a line on standard error, for a log collector
/// (journald, Loki, Elasticsearch) to index without parsing text.
///
/// `{"time", "level", "label", "message", "requestId", "source", "metadata"}`: the time in
/// RFC 3339 UTC with milliseconds, the request id lifted out of the metadata (where
/// `RequestIDMiddleware` puts it as `request_id`), and the rest of the metadata as an object
/// (nested lists and dictionaries kept).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    /// Where the finished line goes (standard error; a test collects them).
    let write: @Sendable (String) -> Void

    init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        var merged = lineMetadata(explicit)
        let requestID = merged.removeValue(forKey: RequestIDKey.name).map { "\($0)" }
        let entry = Entry(
            time: JSONCoding.timestamp(Date()), level: level.rawValue, label: label, message: "\(message)",
            requestId: requestID, source: source, metadata: merged.isEmpty ? nil : merged.mapValues(Value.init))
        guard let data = try? Self.encoder.encode(entry) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    /// One `write(2)` a line, so lines of concurrent tasks never interleave.
    @Sendable static func standardError(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    private struct Entry: Encodable {
        let time: String
        let level: String
        let label: String
        let message: String
        let requestId: String?
        let source: String
        let metadata: [String: Value]?
    }

    /// A metadata value as JSON: text, a list or an object.
    private enum Value: Encodable {
        case text(String)
        case list([Value])
        case object([String: Value])

        init(_ value: Logger.MetadataValue) {
            switch value {
            case .string(let text): self = .text(text)
            case .stringConvertible(let convertible): self = .text(convertible.description)
            case .array(let values): self = .list(values.map(Value.init))
            case .dictionary(let values): self = .object(values.mapValues(Value.init))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .list(let values): try container.encode(values)
            case .object(let values): try container.encode(values)
            }
        }
    }
}
