/// An optional written as `null` when absent, where Swift's synthesized `Encodable` would leave
/// the key out: the contract's objects name every key, an empty one as `null`. An absent key
/// and a `null` decode alike, as nil.
///
/// The one way Parley writes such a key, instead of an `encode(to:)` per type that spells out
/// every key to keep its nulls.
@propertyWrapper
public struct NullEncoded<Value> {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension NullEncoded: Sendable where Value: Sendable {}
extension NullEncoded: Equatable where Value: Equatable {}
extension NullEncoded: Hashable where Value: Hashable {}

extension NullEncoded: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension NullEncoded: Decodable where Value: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// A ``NullEncoded`` key may be absent: nil, as for `null`.
    public func decode<Value: Decodable>(_ type: NullEncoded<Value>.Type, forKey key: Key) throws -> NullEncoded<Value>
    {
        NullEncoded(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}
