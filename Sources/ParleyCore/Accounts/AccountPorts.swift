import Foundation

/// Sessions, devices and MQTT client ids (`cloud.session`, `cloud.device`, ...).
public protocol SessionRepository: Sendable {
    /// Creates or updates the device, stores or drops its push token, creates the session
    /// and issues the MQTT client id, in one transaction.
    func openSession(
        userID: Int64, device: DeviceRegistration, tokens: IssuedTokens, clientID: String
    ) async throws -> (sessionID: Int64, deviceID: Int64)
    /// The identity of a current access token (not expired, session not revoked).
    func authenticate(accessTokenHash: [UInt8], now: Date) async throws -> AuthenticatedUser?
    /// Rotates the refresh token; a spent one revokes its whole session.
    func refresh(refreshTokenHash: [UInt8], next: IssuedTokens, now: Date) async throws -> RefreshOutcome
    /// Revokes the session and drops its device's push token. Returns the MQTT client ids
    /// that must be disconnected.
    func revoke(sessionID: Int64) async throws -> [String]
    /// Revokes every other session of the user (after a password change); returns their
    /// ids and MQTT client ids.
    func revokeOthers(userID: Int64, except sessionID: Int64) async throws -> (sessions: [Int64], clientIDs: [String])
    func devices(userID: Int64) async throws -> [Device]
    /// Whether the MQTT client id is issued to the user for this session and neither is revoked.
    func isClientActive(clientID: String, userID: Int64, sessionID: Int64) async throws -> Bool
    /// Sets the device's push token; false when the device is not the user's.
    func setPushToken(userID: Int64, deviceID: Int64, registration: PushRegistration) async throws -> Bool
    /// Deletes the device and ends its sessions; nil when it is not the user's, else the
    /// revoked session ids and client ids.
    func deleteDevice(userID: Int64, deviceID: Int64) async throws -> (sessions: [Int64], clientIDs: [String])?
}

/// The device part of a login.
public struct DeviceRegistration: Sendable, Equatable {
    public var platform: Device.Platform
    public var name: String?
    public var push: PushRegistration?

    public init(platform: Device.Platform = .other, name: String? = nil, push: PushRegistration? = nil) {
        self.platform = platform
        self.name = name
        self.push = push
    }
}

/// Tells every API instance that sessions ended, so their caches drop them at once.
public protocol SessionRevocationBus: Sendable {
    func publish(revokedSessions: [Int64]) async throws
}

/// What happens to broker connections when sessions end: the broker refuses the sessions'
/// tokens from then on and disconnects their clients (the plugin's `$CONTROL` topic).
public protocol BrokerSessionControl: Sendable {
    func end(sessions: [Int64], clientIDs: [String]) async
}

/// Counts attempts per key in fixed windows, and remembers who earned trust.
public protocol RateLimiter: Sendable {
    /// Records one attempt; returns nil when allowed, else the seconds until it would be.
    func hit(_ key: String, limit: Int, window: Duration) async throws -> Int?
    /// Remembers `key` for `lifetime` (an address that signed in to an account).
    func remember(_ key: String, for lifetime: Duration) async throws
    /// Whether `key` is remembered.
    func remembers(_ key: String) async throws -> Bool
}

/// Slow, salted password hashing off the event loops.
public protocol PasswordHasher: Sendable {
    func hash(_ password: String) async throws -> String
    func verify(_ password: String, hash: String) async throws -> Bool
}
