import Foundation

/// The identity behind an authenticated request.
public struct AuthenticatedUser: Sendable, Equatable {
    public let userID: Int64
    public let sessionID: Int64
    public let deviceID: Int64?
    public let isAdmin: Bool
    /// When the access token stops working.
    public let expiresAt: Date

    public init(userID: Int64, sessionID: Int64, deviceID: Int64?, isAdmin: Bool, expiresAt: Date) {
        self.userID = userID
        self.sessionID = sessionID
        self.deviceID = deviceID
        self.isAdmin = isAdmin
        self.expiresAt = expiresAt
    }
}

/// A new session's tokens, as stored (hashes) and as returned to the client (values).
public struct IssuedTokens: Sendable {
    public let access: OpaqueToken
    public let refresh: OpaqueToken
    public let accessExpiresAt: Date
    public let refreshExpiresAt: Date

    public init(access: OpaqueToken, refresh: OpaqueToken, accessExpiresAt: Date, refreshExpiresAt: Date) {
        self.access = access
        self.refresh = refresh
        self.accessExpiresAt = accessExpiresAt
        self.refreshExpiresAt = refreshExpiresAt
    }

    public static func generate(now: Date, accessLifetime: Duration, refreshLifetime: Duration) -> IssuedTokens {
        IssuedTokens(
            access: .generate(), refresh: .generate(),
            accessExpiresAt: now.addingTimeInterval(accessLifetime.seconds),
            refreshExpiresAt: now.addingTimeInterval(refreshLifetime.seconds))
    }
}

/// What a refresh-token presentation found.
public enum RefreshOutcome: Sendable, Equatable {
    /// The token was current: the session now has the new tokens.
    case rotated(sessionID: Int64, userID: Int64, deviceID: Int64?, clientID: String)
    /// The token was already spent: the session has been revoked; its MQTT clients must go.
    case reused(sessionID: Int64, clientIDs: [String])
    /// Unknown, expired or revoked.
    case invalid
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    public var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
