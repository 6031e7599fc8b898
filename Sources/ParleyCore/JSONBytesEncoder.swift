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
        let scratch = Scratch()
        let encoder = ValueEncoder(userInfo: userInfo, scratch: scratch)
        try encoder.encodeValue(value)
        var output: [UInt8] = []
        output.reserveCapacity(scratch.bytes.count + 256)
        (encoder.node ?? .object(ObjectNode())).write(to: &output, from: scratch.bytes)
        return output
    }
}

/// Where an encoding's scalars are written as they are encoded, one after another: a node
/// keeps its range, so no scalar costs an allocation of its own.
private final class Scratch {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(1024) }

    func scalar(_ write: (inout [UInt8]) throws -> Void) rethrows -> Node {
        let start = bytes.count
        try write(&bytes)
        return .scalar(start..<bytes.count)
    }
}

/// What a value encoded to: a scalar already written, or a container still being filled.
private enum Node {
    /// Bytes of the encoding's ``Scratch``.
    case scalar(Range<Int>)
    case null
    case bool(Bool)
    case object(ObjectNode)
    case array(ArrayNode)

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

private final class ObjectNode {
    var fields: [(key: String, value: Node)] = []

    func set(_ key: String, _ value: Node) {
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

private final class ArrayNode {
    var items: [Node] = []

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
private enum JSONScalar {
    static func string(_ text: String, in scratch: Scratch) -> Node {
        scratch.scalar { writeString(text, to: &$0) }
    }

    static func integer(_ value: some BinaryInteger, in scratch: Scratch) -> Node {
        scratch.scalar { $0.append(contentsOf: String(value).utf8) }
    }

    static func floatingPoint<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F, in scratch: Scratch)
        throws -> Node
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
        // Most strings (every key) need no escape: copied whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(contentsOf: text.utf8)
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
}

/// The `Encoder` a value encodes itself to: it holds what the value became.
private final class ValueEncoder: Encoder {
    let userInfo: [CodingUserInfoKey: Any]
    let scratch: Scratch
    var node: Node?
    var codingPath: [any CodingKey] { [] }

    init(userInfo: [CodingUserInfoKey: Any], scratch: Scratch) {
        self.userInfo = userInfo
        self.scratch = scratch
    }

    /// `value`'s node, with the types Foundation's encoder writes specially written the same way.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == Date.self, let date = value as? Date {
            node = JSONScalar.string(JSONCoding.timestamp(date), in: scratch)
        } else if T.self == URL.self, let url = value as? URL {
            node = JSONScalar.string(url.absoluteString, in: scratch)
        } else if T.self == Data.self, let data = value as? Data {
            node = JSONScalar.string(data.base64EncodedString(), in: scratch)
        } else {
            try value.encode(to: self)
        }
    }

    /// The node `value` encodes to, from an encoder of its own (an empty object if it wrote nothing).
    func child(_ value: some Encodable) throws -> Node {
        let encoder = ValueEncoder(userInfo: userInfo, scratch: scratch)
        try encoder.encodeValue(value)
        return encoder.node ?? .object(ObjectNode())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, object: object()))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: self, array: array())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoder: self) }

    func object() -> ObjectNode {
        if case .object(let object) = node { return object }
        let object = ObjectNode()
        node = .object(object)
        return object
    }

    func array() -> ArrayNode {
        if case .array(let array) = node { return array }
        let array = ArrayNode()
        node = .array(array)
        return array
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    let object: ObjectNode
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { object.set(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        object.set(key.stringValue, .bool(value))
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.string(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        object.set(key.stringValue, try JSONScalar.floatingPoint(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        object.set(key.stringValue, try JSONScalar.floatingPoint(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        object.set(key.stringValue, JSONScalar.integer(value, in: encoder.scratch))
    }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        object.set(key.stringValue, try encoder.child(value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = ObjectNode()
        object.set(key.stringValue, .object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        object.set(key.stringValue, .array(nested))
        return UnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        SlotEncoder(encoder) { [object] in object.set("super", $0) }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SlotEncoder(encoder) { [object] in object.set(key.stringValue, $0) }
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    let array: ArrayNode
    var codingPath: [any CodingKey] { [] }
    var count: Int { array.items.count }

    mutating func encodeNil() throws { array.items.append(.null) }
    mutating func encode(_ value: Bool) throws { array.items.append(.bool(value)) }
    mutating func encode(_ value: String) throws { array.items.append(JSONScalar.string(value, in: encoder.scratch)) }
    mutating func encode(_ value: Double) throws {
        array.items.append(try JSONScalar.floatingPoint(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Float) throws {
        array.items.append(try JSONScalar.floatingPoint(value, in: encoder.scratch))
    }
    mutating func encode(_ value: Int) throws { array.items.append(JSONScalar.integer(value, in: encoder.scratch)) }
    mutating func encode(_ value: Int64) throws { array.items.append(JSONScalar.integer(value, in: encoder.scratch)) }
    mutating func encode(_ value: some Encodable) throws { array.items.append(try encoder.child(value)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = ObjectNode()
        array.items.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        array.items.append(.array(nested))
        return UnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let index = array.items.count
        array.items.append(.object(ObjectNode()))
        return SlotEncoder(encoder) { [array] in array.items[index] = $0 }
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { encoder.node = .null }
    mutating func encode(_ value: Bool) throws { encoder.node = .bool(value) }
    mutating func encode(_ value: String) throws { encoder.node = JSONScalar.string(value, in: encoder.scratch) }
    mutating func encode(_ value: Double) throws {
        encoder.node = try JSONScalar.floatingPoint(value, in: encoder.scratch)
    }
    mutating func encode(_ value: Float) throws {
        encoder.node = try JSONScalar.floatingPoint(value, in: encoder.scratch)
    }
    mutating func encode(_ value: Int) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: Int8) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: Int16) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: Int32) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: Int64) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: UInt) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: UInt8) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: UInt16) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: UInt32) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: UInt64) throws { encoder.node = JSONScalar.integer(value, in: encoder.scratch) }
    mutating func encode(_ value: some Encodable) throws { try encoder.encodeValue(value) }
}

/// A super-encoder: what is encoded to it lands in its parent's slot once its value is made,
/// which is when its parent is written (the parent keeps the node, a reference).
private final class SlotEncoder: Encoder {
    private let inner: ValueEncoder
    private let place: (Node) -> Void
    var userInfo: [CodingUserInfoKey: Any] { inner.userInfo }
    var codingPath: [any CodingKey] { [] }

    init(_ parent: ValueEncoder, place: @escaping (Node) -> Void) {
        inner = ValueEncoder(userInfo: parent.userInfo, scratch: parent.scratch)
        self.place = place
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        defer { place(inner.node!) }
        return inner.container(keyedBy: type)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        defer { place(inner.node!) }
        return inner.unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SlotSingleValueContainer(
            inner: SingleValueContainer(encoder: inner), place: { [inner, place] in place(inner.node ?? .null) })
    }
}

/// A super-encoder's single value, placed each time one is encoded.
private struct SlotSingleValueContainer: SingleValueEncodingContainer {
    var inner: SingleValueContainer
    let place: () -> Void
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {
        try inner.encodeNil()
        place()
    }
    mutating func encode(_ value: Bool) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: String) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Double) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Float) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Int) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Int8) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Int16) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Int32) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: Int64) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: UInt) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: UInt8) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: UInt16) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: UInt32) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: UInt64) throws {
        try inner.encode(value)
        place()
    }
    mutating func encode(_ value: some Encodable) throws {
        try inner.encode(value)
        place()
    }
}
