import Foundation

/// Parley's JSON: camelCase keys as declared, RFC 3339 UTC timestamps with milliseconds
/// (`2026-11-21T22:43:00.123Z`), for REST answers and MQTT payloads alike.
public enum JSONCoding {
    // One encoder, decoder and format of each kind for the process: building them (and looking
    // the UTC time zone up) for every message cost more than the encoding itself. Foundation's
    // JSONEncoder and JSONDecoder are Sendable and may be used from many tasks at once.
    public static let encoder = makeEncoder()

    /// A new encoder of Parley's JSON, for an answer whose encoding depends on `userInfo` (a
    /// ``FileViewer``'s signed links).
    public static func makeEncoder(userInfo: [CodingUserInfoKey: any Sendable] = [:]) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        encoder.userInfo = userInfo
        return encoder
    }

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = date(text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 timestamp"))
            }
            return date
        }
        return decoder
    }()

    private static let timestampFormat = Date.ISO8601FormatStyle(
        includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!)
    private static let fractionalFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSecondsFormat = Date.ISO8601FormatStyle()

    public static func timestamp(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        return RFC3339Timestamp.append(date, to: &bytes)
            ? String(decoding: bytes, as: UTF8.self) : date.formatted(timestampFormat)
    }

    /// ``timestamp(_:)`` as a JSON string, appended to `output` without a `String` between.
    static func appendTimestamp(_ date: Date, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        if !RFC3339Timestamp.append(date, to: &output) {
            output.append(contentsOf: date.formatted(timestampFormat).utf8)
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Parses RFC 3339 with or without fractional seconds.
    public static func date(_ text: String) -> Date? {
        (try? fractionalFormat.parse(text)) ?? (try? wholeSecondsFormat.parse(text))
    }
}
