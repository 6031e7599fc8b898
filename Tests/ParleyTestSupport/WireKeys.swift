/// The keys of a JSON object as sent, a null one too: what a check of the wire's own shape
/// reads (a key there as null, or left out), which an optional property cannot tell apart.
public struct WireKeys: Decodable, Sendable, Equatable {
    public let keys: Set<String>

    public init(from decoder: any Decoder) throws {
        keys = Set(try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue))
    }

    struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
