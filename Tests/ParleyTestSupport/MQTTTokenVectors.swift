import Foundation

/// `Tests/Vectors/mqtt-token.json`: the MQTT token format, shared by the Swift and C verifiers.
public struct MQTTTokenVectors: Decodable, Sendable {
    public struct Valid: Decodable, Sendable {
        public let userId: String
        public let clientId: String
        public let sessionId: String
        public let expiresAt: Int64
        public let token: String
    }
    public struct Invalid: Decodable, Sendable {
        public let reason: String
        public let token: String
    }
    public let keyBase64: String
    public let valid: [Valid]
    public let invalid: [Invalid]
    /// The instant the vectors are verified at.
    public let verifiedAt: Int64

    /// The `Tests/` directory of the repository.
    public static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()

    public static func load() throws -> MQTTTokenVectors {
        try JSONDecoder().decode(
            MQTTTokenVectors.self,
            from: Data(contentsOf: testsDirectory.appendingPathComponent("Vectors/mqtt-token.json")))
    }
}
