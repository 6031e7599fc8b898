import Foundation

/// JSON written by hand, for an answer whose generic encoding costs too much (the room list):
/// each object's keys are given in the order ``JSONBytesEncoder`` sorts them, and any value
/// not written by hand goes through that encoder, so the bytes are the same.
public struct JSONHandWriter {
    public private(set) var bytes: [UInt8] = []
    private let encoder: JSONBytesEncoder
    /// The encoder's scalars of each value, one buffer for the whole answer.
    private let scratch = JSONScratch()
    /// For each open object or array: whether nothing has been written in it yet.
    private var empty: [Bool] = []
    /// A key was written, its value not yet.
    private var afterKey = false

    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        encoder = JSONBytesEncoder(userInfo: userInfo)
        bytes.reserveCapacity(4096)
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        empty.append(true)
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        empty.removeLast()
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        empty.append(true)
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        empty.removeLast()
    }

    public mutating func key(_ key: String) {
        separate()
        JSONScalar.writeString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    public mutating func string(_ value: String?) {
        separate()
        if let value { JSONScalar.writeString(value, to: &bytes) } else { writeNull() }
    }

    public mutating func integer(_ value: Int64?) {
        separate()
        if let value { bytes.append(contentsOf: String(value).utf8) } else { writeNull() }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func date(_ value: Date?) {
        separate()
        if let value { JSONCoding.appendTimestamp(value, to: &bytes) } else { writeNull() }
    }

    /// A value already encoded by ``JSONBytesEncoder`` (one encoding shared by many answers).
    public mutating func encoded(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Any other value, through ``JSONBytesEncoder``; nil is `null`.
    public mutating func value(_ value: (some Encodable)?) throws {
        separate()
        if let value { try encoder.encode(value, appendingTo: &bytes, scratch: scratch) } else { writeNull() }
    }

    private mutating func writeNull() { bytes.append(contentsOf: "null".utf8) }

    /// The comma before a member, unless it is its container's first or a key's value.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let isEmpty = empty.last else { return }
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        empty[empty.count - 1] = false
    }
}
