import Foundation

/// The `Encoder` a value encodes itself to: it holds what the value became.
final class JSONValueEncoder: Encoder {
    let userInfo: [CodingUserInfoKey: Any]
    let scratch: JSONScratch
    var node: JSONNode?
    var codingPath: [any CodingKey] { [] }

    init(userInfo: [CodingUserInfoKey: Any], scratch: JSONScratch) {
        self.userInfo = userInfo
        self.scratch = scratch
    }

    /// `value`'s node, with the types Foundation's encoder writes specially written the same way.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == Date.self, let date = value as? Date {
            node = scratch.scalar { JSONCoding.appendTimestamp(date, to: &$0) }
        } else if T.self == URL.self, let url = value as? URL {
            node = JSONScalar.string(url.absoluteString, in: scratch)
        } else if T.self == Data.self, let data = value as? Data {
            node = JSONScalar.string(data.base64EncodedString(), in: scratch)
        } else {
            try value.encode(to: self)
        }
    }

    /// The node `value` encodes to, from an encoder of its own (an empty object if it wrote nothing).
    func child(_ value: some Encodable) throws -> JSONNode {
        let encoder = JSONValueEncoder(userInfo: userInfo, scratch: scratch)
        try encoder.encodeValue(value)
        return encoder.node ?? .object(JSONObjectNode())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(JSONKeyedContainer<Key>(encoder: self, object: object()))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONUnkeyedContainer(encoder: self, array: array())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { JSONSingleValueContainer(encoder: self) }

    func object() -> JSONObjectNode {
        if case .object(let object) = node { return object }
        let object = JSONObjectNode()
        node = .object(object)
        return object
    }

    func array() -> JSONArrayNode {
        if case .array(let array) = node { return array }
        let array = JSONArrayNode()
        node = .array(array)
        return array
    }
}

struct JSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONValueEncoder
    let object: JSONObjectNode
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
        let nested = JSONObjectNode()
        object.set(key.stringValue, .object(nested))
        return KeyedEncodingContainer(JSONKeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = JSONArrayNode()
        object.set(key.stringValue, .array(nested))
        return JSONUnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        JSONSlotEncoder(encoder) { [object] in object.set("super", $0) }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONSlotEncoder(encoder) { [object] in object.set(key.stringValue, $0) }
    }
}

struct JSONUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONValueEncoder
    let array: JSONArrayNode
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
        let nested = JSONObjectNode()
        array.items.append(.object(nested))
        return KeyedEncodingContainer(JSONKeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = JSONArrayNode()
        array.items.append(.array(nested))
        return JSONUnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let index = array.items.count
        array.items.append(.object(JSONObjectNode()))
        return JSONSlotEncoder(encoder) { [array] in array.items[index] = $0 }
    }
}

struct JSONSingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONValueEncoder
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
final class JSONSlotEncoder: Encoder {
    private let inner: JSONValueEncoder
    private let place: (JSONNode) -> Void
    var userInfo: [CodingUserInfoKey: Any] { inner.userInfo }
    var codingPath: [any CodingKey] { [] }

    init(_ parent: JSONValueEncoder, place: @escaping (JSONNode) -> Void) {
        inner = JSONValueEncoder(userInfo: parent.userInfo, scratch: parent.scratch)
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
        JSONSlotSingleValueContainer(
            inner: JSONSingleValueContainer(encoder: inner), place: { [inner, place] in place(inner.node ?? .null) })
    }
}

/// A super-encoder's single value, placed each time one is encoded.
struct JSONSlotSingleValueContainer: SingleValueEncodingContainer {
    var inner: JSONSingleValueContainer
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
