import Foundation
import Synchronization

/// Registration, login, token refresh, logout and profile changes: the account rules,
/// over the storage, hashing, rate-limiting and revocation ports.
public struct AccountService: Sendable {
    let users: any UserRepository
    let sessions: any SessionRepository
    let hasher: any PasswordHasher
    let limiter: any RateLimiter
    let revocations: any SessionRevocationBus
    let broker: any BrokerSessionControl
    let mqttKey: MQTTTokenKey
    public let policy: AccountPolicy
    /// Tells this process's session cache at once, before the bus reaches the others.
    let revokedLocally: @Sendable ([Int64]) -> Void
    /// Sign-in with a trusted issuer's token; nil when no issuer is trusted.
    public let tokenExchange: TokenExchange?
    private let dummyHash = DummyHash()

    public init(
        users: any UserRepository, sessions: any SessionRepository, hasher: any PasswordHasher,
        limiter: any RateLimiter, revocations: any SessionRevocationBus, broker: any BrokerSessionControl,
        mqttKey: MQTTTokenKey, policy: AccountPolicy, revokedLocally: @escaping @Sendable ([Int64]) -> Void,
        tokenExchange: TokenExchange? = nil
    ) {
        self.tokenExchange = tokenExchange
        self.users = users
        self.sessions = sessions
        self.hasher = hasher
        self.limiter = limiter
        self.revocations = revocations
        self.broker = broker
        self.mqttKey = mqttKey
        self.policy = policy
        self.revokedLocally = revokedLocally
    }

    /// A signed-in session as the client receives it.
    public struct SignedIn: Sendable {
        public let tokens: IssuedTokens
        public let user: User
        public let sessionID: Int64
        public let deviceID: Int64?
        public let clientID: String
        public let mqttPassword: String
        public let mqttExpiresAt: Date
    }

    public func register(_ newUser: NewUser, password: String, clientAddress: String?) async throws -> User {
        guard policy.registrationOpen else {
            throw ParleyError(.registrationClosed, "Registration is closed; an administrator creates accounts.")
        }
        try await limit("register:address:\(clientAddress ?? "unknown")", policy.registerLimitPerAddress)
        var user = try newUser.validated()
        user.passwordHash = try await hasher.hash(PasswordRule.validated(password))
        return try await users.create(user)
    }

    /// Unknown e-mail and wrong password answer alike, after the same amount of hashing.
    public func login(
        email: String, password: String, device: DeviceRegistration, clientAddress: String?
    ) async throws -> SignedIn {
        let email = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard email.unicodeScalars.count <= 320, !email.unicodeScalars.contains("\u{0}") else {
            throw ParleyError(.invalidCredentials, "The e-mail or the password is wrong.")
        }
        try await signInAttempt(clientAddress: clientAddress)
        try await passwordAttempt(email: email, clientAddress: clientAddress)
        // An account without a password answers as an unknown e-mail does, after as much hashing.
        let found = try await users.credentials(email: email).flatMap {
            $0.passwordHash == NewUser.noPassword ? nil : $0
        }
        let hash: String
        if let found { hash = found.passwordHash } else { hash = try await dummyHash.value(hasher) }
        guard try await hasher.verify(password, hash: hash), let user = found?.user else {
            throw ParleyError(.invalidCredentials, "The e-mail or the password is wrong.")
        }
        try await limiter.remember(Self.knownAddressKey(email, clientAddress), for: Self.knownAddressLifetime)
        // A deactivation is said only to whoever knows the password.
        return try await openSession(for: user, device: device)
    }

    /// A new session of `user` on `device`, as every sign-in ends (password or token
    /// exchange); a deactivated account gets none.
    func openSession(for user: User, device: DeviceRegistration) async throws -> SignedIn {
        if try await users.isDeactivated(id: user.id) {
            throw ParleyError(.accountDeactivated, "An administrator deactivated this account.")
        }
        let now = Date()
        let tokens = IssuedTokens.generate(
            now: now, accessLifetime: policy.accessTokenLifetime, refreshLifetime: policy.refreshTokenLifetime)
        let clientID = Self.newClientID(userID: user.id)
        let (sessionID, deviceID) = try await sessions.openSession(
            userID: user.id, device: device, tokens: tokens, clientID: clientID)
        return signedIn(
            tokens: tokens, user: user, sessionID: sessionID, deviceID: deviceID, clientID: clientID, now: now)
    }

    /// Checks the per-address sign-in budget, shared by password logins and token exchanges.
    func signInAttempt(clientAddress: String?) async throws {
        try await limit("login:address:\(clientAddress ?? "unknown")", policy.loginLimitPerAddress)
    }

    /// Rotates the refresh token. A spent one revokes its session (someone copied it).
    public func refresh(token: String) async throws -> SignedIn {
        let now = Date()
        let next = IssuedTokens.generate(
            now: now, accessLifetime: policy.accessTokenLifetime, refreshLifetime: policy.refreshTokenLifetime)
        switch try await sessions.refresh(refreshTokenHash: OpaqueToken(value: token).hash, next: next, now: now) {
        case .rotated(let sessionID, let userID, let deviceID, let clientID):
            guard let user = try await users.find(id: userID) else { throw ParleyError.unauthorized }
            // A session opened while the account was being deactivated ends here.
            if try await users.isDeactivated(id: userID) {
                let clientIDs = try await sessions.revoke(sessionID: sessionID)
                await announce(revoked: [sessionID], clientIDs: clientIDs)
                throw ParleyError(.accountDeactivated, "An administrator deactivated this account.")
            }
            return signedIn(
                tokens: next, user: user, sessionID: sessionID, deviceID: deviceID, clientID: clientID, now: now)
        case .reused(let sessionID, let clientIDs):
            await announce(revoked: [sessionID], clientIDs: clientIDs)
            throw ParleyError(.unauthorized, "The refresh token was already used; the session is revoked.")
        case .invalid:
            throw ParleyError(.unauthorized, "The refresh token is not valid.")
        }
    }

    public func logout(_ identity: AuthenticatedUser) async throws {
        let clientIDs = try await sessions.revoke(sessionID: identity.sessionID)
        await announce(revoked: [identity.sessionID], clientIDs: clientIDs)
    }

    /// Deletes one of the caller's devices and ends its sessions.
    public func deleteDevice(_ identity: AuthenticatedUser, deviceID: Int64) async throws {
        guard let ended = try await sessions.deleteDevice(userID: identity.userID, deviceID: deviceID) else {
            throw ParleyError.notFound("No such device.")
        }
        await announce(revoked: ended.sessions, clientIDs: ended.clientIDs)
    }

    /// Changes names and, given the current password, the password; a new password ends
    /// every other session.
    public func updateProfile(
        _ identity: AuthenticatedUser, firstName: String?, lastName: String?, password: String?,
        currentPassword: String?, clientAddress: String?
    ) async throws -> User {
        for (field, value) in [("firstName", firstName), ("lastName", lastName)] {
            if let value {
                _ = try TextRule.validated(value.trimmingCharacters(in: .whitespaces), field: field, length: 1...100)
            }
        }
        var newHash: String?
        if let password {
            _ = try PasswordRule.validated(password)
            guard let currentPassword else {
                throw ParleyError.invalidRequest(
                    "currentPassword is required to change the password", field: "currentPassword")
            }
            guard try await verifyPassword(currentPassword, userID: identity.userID, clientAddress: clientAddress)
            else { throw ParleyError(.invalidCredentials, "The current password is wrong.") }
            newHash = try await hasher.hash(password)
        }
        guard
            let user = try await users.update(
                id: identity.userID, firstName: firstName, lastName: lastName, passwordHash: newHash)
        else { throw ParleyError.unauthorized }
        if newHash != nil {
            let ended = try await sessions.revokeOthers(userID: identity.userID, except: identity.sessionID)
            await announce(revoked: ended.sessions, clientIDs: ended.clientIDs)
        }
        return user
    }

    private func signedIn(
        tokens: IssuedTokens, user: User, sessionID: Int64, deviceID: Int64?, clientID: String, now: Date
    ) -> SignedIn {
        let mqtt = mqttPassword(userID: user.id, sessionID: sessionID, clientID: clientID, now: now)
        return SignedIn(
            tokens: tokens, user: user, sessionID: sessionID, deviceID: deviceID, clientID: clientID,
            mqttPassword: mqtt.password, mqttExpiresAt: mqtt.expiresAt)
    }

    /// An MQTT password for the session's client id, valid for the policy's MQTT lifetime.
    func mqttPassword(userID: Int64, sessionID: Int64, clientID: String, now: Date = Date()) -> (
        password: String, expiresAt: Date
    ) {
        let expiresAt = now.addingTimeInterval(policy.mqttTokenLifetime.seconds)
        let token = MQTTToken(
            userID: userID, clientID: clientID, sessionID: sessionID, expiresAt: Int64(expiresAt.timeIntervalSince1970))
        return (token.signed(with: mqttKey), expiresAt)
    }

    /// An administrator deactivates an account — its sessions end at once (API instances and
    /// the broker, whose clients of it are disconnected) and it cannot sign in — or activates
    /// it again.
    public func setDeactivated(userID: Int64, _ deactivated: Bool) async throws {
        guard try await users.setDeactivated(id: userID, deactivated: deactivated) else {
            throw ParleyError.notFound("No such user.")
        }
        guard deactivated else { return }
        try await endSessions(of: userID)
    }

    /// Ends every session of the user at once: this process's cache, the other API instances
    /// and the broker (whose clients of them are disconnected).
    public func endSessions(of userID: Int64) async throws {
        let ended = try await sessions.revokeOthers(userID: userID, except: 0)
        await announce(revoked: ended.sessions, clientIDs: ended.clientIDs)
    }

    /// Whether `password` is the user's (changing the password and deleting the account ask
    /// for it): an attempt on the same budget as logins, so a stolen access token cannot
    /// guess the password faster than a login could.
    public func verifyPassword(_ password: String, userID: Int64, clientAddress: String?) async throws -> Bool {
        guard let user = try await users.find(id: userID) else { return false }
        try await passwordAttempt(email: user.email.lowercased(), clientAddress: clientAddress)
        guard let stored = try await users.passwordHash(userID: userID), stored != NewUser.noPassword else {
            return false
        }
        return try await hasher.verify(password, hash: stored)
    }

    /// How long an address that signed in to an account keeps a budget of its own there.
    static let knownAddressLifetime = Duration.seconds(30 * 24 * 3600)

    static func knownAddressKey(_ email: String, _ clientAddress: String?) -> String {
        "login:known:\(email):\(clientAddress ?? "unknown")"
    }

    /// One password attempt on an account: a budget per account and address, so that no one
    /// elsewhere can lock the owner out; addresses that never signed in to the account also
    /// share one budget, so that guesses spread over many addresses stay bounded.
    private func passwordAttempt(email: String, clientAddress: String?) async throws {
        try await limit("login:email:\(email):address:\(clientAddress ?? "unknown")", policy.loginLimitPerEmail)
        if try await !limiter.remembers(Self.knownAddressKey(email, clientAddress)) {
            try await limit("login:email:\(email):new-addresses", policy.loginLimitPerAccount)
        }
    }

    /// Revocation reaches this process's cache, every other API instance and the broker.
    private func announce(revoked sessionIDs: [Int64], clientIDs: [String]) async {
        revokedLocally(sessionIDs)
        // Other instances' caches also expire entries on their own; a failed publish is
        // covered by their subscriber's reconnect, which empties the cache.
        try? await revocations.publish(revokedSessions: sessionIDs)
        if !sessionIDs.isEmpty || !clientIDs.isEmpty { await broker.end(sessions: sessionIDs, clientIDs: clientIDs) }
    }

    private func limit(_ key: String, _ limit: Int) async throws {
        if let retryAfter = try await limiter.hit(key, limit: limit, window: policy.rateLimitWindow) {
            throw ParleyError.rateLimited(retryAfter: retryAfter)
        }
    }

    /// MQTT client ids: unguessable, at most 64 characters, naming their user for operators.
    static func newClientID(userID: Int64) -> String {
        "parley-\(userID)-\(OpaqueToken.generate().value.prefix(16))"
    }
}

/// A hash of a random password, computed once, verified against when the e-mail is unknown
/// so that the answer takes as long as for a wrong password.
private final class DummyHash: Sendable {
    private let hash = Mutex<String?>(nil)

    func value(_ hasher: any PasswordHasher) async throws -> String {
        if let hash = hash.withLock({ $0 }) { return hash }
        let computed = try await hasher.hash(OpaqueToken.generate().value)
        hash.withLock { $0 = $0 ?? computed }
        return computed
    }
}
