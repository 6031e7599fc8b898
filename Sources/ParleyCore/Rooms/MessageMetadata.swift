import Foundation

/// The app's own data on a message: a JSON object of at most 8 KiB and 8 levels, stored and
/// answered as sent, replaced by an edit that gives it.
public struct MessageMetadata: Sendable, Equatable, Codable {
    public static let maximumBytes = 8 * 1024
    /// The outer object is level 1; arrays count.
    public static let maximumDepth = 8

    public let members: [String: JSONValue]

    /// Checks the limits; `field` names the metadata in an error.
    public init(_ members: [String: JSONValue], field: String = "metadata") throws {
        guard JSONValue.object(members).depth <= Self.maximumDepth else {
            throw ParleyError.invalidRequest(
                "metadata may be nested at most \(Self.maximumDepth) levels deep", field: field)
        }
        // Its compact JSON: what is stored and answered, whatever spacing it was sent with.
        guard try JSONCoding.encoder.encode(members).count <= Self.maximumBytes else {
            throw ParleyError.invalidRequest("metadata may be at most \(Self.maximumBytes) bytes of JSON", field: field)
        }
        self.members = members
    }

    public init(from decoder: any Decoder) throws {
        let field = decoder.codingPath.map(\.stringValue).joined(separator: ".")
        let value = try JSONValue(from: decoder)
        guard case .object(let members) = value else {
            throw ParleyError.invalidRequest("metadata must be a JSON object", field: field)
        }
        try self.init(members, field: field)
    }

    public func encode(to encoder: any Encoder) throws {
        try members.encode(to: encoder)
    }

    /// The JSON text, as the database stores it.
    public var json: String {
        // An object of JSON values always encodes.
        (try? String(decoding: JSONCoding.encoder.encode(members), as: UTF8.self)) ?? "{}"
    }

    /// Reads stored JSON text back.
    public init(json: String) throws {
        members = try JSONCoding.decoder.decode([String: JSONValue].self, from: Data(json.utf8))
    }
}

/// What a message is: plain `text`, a `system` notice from the app's server, or the app's
/// own kind (`x-` and 1 to 62 of `a-z 0-9 . -`), which clients that do not know it show as text.
public struct MessageType: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let text = MessageType(rawValue: "text")
    public static let system = MessageType(rawValue: "system")

    /// A type a user's client may send: `text` or the app's own; `system` only from the server.
    public init(sentByUser rawValue: String, field: String) throws {
        guard rawValue == "text" || Self.isCustom(rawValue) else {
            throw ParleyError.invalidRequest(
                rawValue == "system"
                    ? "only the app's server sends system messages"
                    : "type must be text or the app's own, x- and 1 to 62 of a-z 0-9 . -",
                field: field)
        }
        self.rawValue = rawValue
    }

    private static func isCustom(_ value: String) -> Bool {
        let scalars = value.unicodeScalars
        guard value.hasPrefix("x-"), (3...64).contains(scalars.count) else { return false }
        return scalars.dropFirst(2).allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-"
        }
    }
}
