import Foundation

/// Encodes as ``JSONCoding/encoder`` does, byte for byte (keys sorted, slashes unescaped,
/// dates as ``JSONCoding/timestamp(_:)``, doubles as Foundation writes them), for about 28 %
/// less CPU: no coding path is kept, no type is looked up at run time but the three Foundation
/// encodes specially (`Date`, `URL`, `Data`), and scalars are written as bytes when encoded.
/// A REST answer of twenty rooms spent a third of `serve`'s CPU in Foundation's encoder (the
/// ParleyAPI article *One write per answer* has the measurements).
public struct JSONBytesEncoder {
    /// What the encoded values read from their encoder (a viewer's signed file links).
    public var userInfo: [CodingUserInfoKey: any Sendable]

    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) { self.userInfo = userInfo }

    public func encode(_ value: some Encodable) throws -> [UInt8] {
        var output: [UInt8] = []
        try encode(value, appendingTo: &output, scratch: JSONScratch())
        return output
    }

    /// `value`'s JSON after `output`'s bytes, its scalars first written into `scratch`, which a
    /// writer of many values (``JSONHandWriter``) keeps for all of them.
    func encode(_ value: some Encodable, appendingTo output: inout [UInt8], scratch: JSONScratch) throws {
        scratch.bytes.removeAll(keepingCapacity: true)
        let encoder = JSONValueEncoder(userInfo: userInfo, scratch: scratch)
        try encoder.encodeValue(value)
        // Only a new output: reserving on a growing one would give up its doubling.
        if output.isEmpty { output.reserveCapacity(scratch.bytes.count + 256) }
        (encoder.node ?? .object(JSONObjectNode())).write(to: &output, from: scratch.bytes)
    }
}

/// Where an encoding's scalars are written as they are encoded, one after another: a node
/// keeps its range, so no scalar costs an allocation of its own.
final class JSONScratch {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(1024) }

    func scalar(_ write: (inout [UInt8]) throws -> Void) rethrows -> JSONNode {
        let start = bytes.count
        try write(&bytes)
        return .scalar(start..<bytes.count)
    }
}

/// What a value encoded to: a scalar already written, or a container still being filled.
enum JSONNode {
    /// Bytes of the encoding's ``JSONScratch``.
    case scalar(Range<Int>)
    case null
    case bool(Bool)
    case object(JSONObjectNode)
    case array(JSONArrayNode)

    func write(to output: inout [UInt8], from scratch: [UInt8]) {
        switch self {
        case .scalar(let range): output.append(contentsOf: scratch[range])
        case .null:
            output.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        case .bool(true):
            output.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        case .bool(false):
            output.append(contentsOf: [
                UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e"),
            ])
        case .object(let object): object.write(to: &output, from: scratch)
        case .array(let array): array.write(to: &output, from: scratch)
        }
    }
}

final class JSONObjectNode {
    var fields: [(key: String, value: JSONNode)] = []

    func set(_ key: String, _ value: JSONNode) {
        if let index = fields.firstIndex(where: { $0.key == key }) {
            fields[index].value = value
        } else {
            fields.append((key, value))
        }
    }

    func write(to output: inout [UInt8], from scratch: [UInt8]) {
        output.append(UInt8(ascii: "{"))
        let sorted = fields.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (index, field) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONScalar.writeString(field.key, to: &output)
            output.append(UInt8(ascii: ":"))
            field.value.write(to: &output, from: scratch)
        }
        output.append(UInt8(ascii: "}"))
    }
}

final class JSONArrayNode {
    var items: [JSONNode] = []

    func write(to output: inout [UInt8], from scratch: [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            item.write(to: &output, from: scratch)
        }
        output.append(UInt8(ascii: "]"))
    }
}

/// Scalars as Foundation's encoder writes them.
enum JSONScalar {
    static func string(_ text: String, in scratch: JSONScratch) -> JSONNode {
        scratch.scalar { writeString(text, to: &$0) }
    }

    static func integer(_ value: some BinaryInteger, in scratch: JSONScratch) -> JSONNode {
        scratch.scalar { $0.append(contentsOf: String(value).utf8) }
    }

    static func floatingPoint<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F, in scratch: JSONScratch)
        throws -> JSONNode
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Unable to encode \(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return scratch.scalar { $0.append(contentsOf: text.utf8) }
    }

    static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        if appendUnescaped(text, to: &output) {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `text` whole when it needs no escape (most strings, every key); false when it
    /// does. It reads the string's own UTF-8 in one pass (`withUTF8` makes a string contiguous
    /// first if it is not): a byte loop over `String.UTF8View` was 2 % of `serve`'s CPU for a
    /// twenty-room list.
    private static func appendUnescaped(_ text: String, to output: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard !bytes.contains(where: needsEscape) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
