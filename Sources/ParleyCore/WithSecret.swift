/// A thing answered once with its secret (an issued server key, a registered webhook): its own
/// fields and `secret` side by side in one object. Parley never answers the secret again.
public struct WithSecret<Value: Codable & Sendable>: Sendable, Codable {
    public let value: Value
    public let secret: String

    public init(_ value: Value, secret: String) {
        self.value = value
        self.secret = secret
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
        var container = encoder.container(keyedBy: SecretKey.self)
        try container.encode(secret, forKey: .secret)
    }

    public init(from decoder: any Decoder) throws {
        value = try Value(from: decoder)
        secret = try decoder.container(keyedBy: SecretKey.self).decode(String.self, forKey: .secret)
    }

    private enum SecretKey: String, CodingKey { case secret }
}
