import Foundation

/// A client installation that logged in (`cloud.device`).
public struct Device: Sendable, Equatable, Codable {
    public enum Platform: String, Sendable, Codable, CaseIterable {
        case ios, android, web, other
    }

    public let id: Int64
    public var platform: Platform
    public var name: String?
    public var pushProvider: PushProvider?
    public var hasPushToken: Bool
    public let createdAt: Date
    public var lastSeenAt: Date

    public init(
        id: Int64, platform: Platform, name: String?, pushProvider: PushProvider?, hasPushToken: Bool,
        createdAt: Date, lastSeenAt: Date
    ) {
        self.id = id
        self.platform = platform
        self.name = name
        self.pushProvider = pushProvider
        self.hasPushToken = hasPushToken
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
    }
}

/// Who delivers a device's pushes.
public enum PushProvider: String, Sendable, Codable, CaseIterable {
    case apns, fcm, webhook
}

/// A push registration as presented by a client.
public struct PushRegistration: Sendable, Equatable {
    public let provider: PushProvider
    public let token: String

    public init(provider: PushProvider, token: String) throws {
        let token = token.trimmingCharacters(in: .whitespaces)
        guard (1...4096).contains(token.utf8.count) else {
            throw ParleyError.invalidRequest("pushToken must be 1 to 4096 characters", field: "pushToken")
        }
        self.provider = provider
        self.token = token
    }
}
