import Foundation

/// A signed-in session's tokens, renewed one refresh at a time.
///
/// Parley's refresh tokens are single-use, and presenting one twice revokes the whole session:
/// two refreshes at once (two requests that found the access token expired, an app and its
/// notification extension) would sign the user out. Every caller that finds the access token
/// due shares the one refresh in flight. An app that shares tokens with an extension keeps them
/// in a keychain access group and saves them in ``onRenewal``.
public actor ParleyTokens {
    public struct Tokens: Sendable, Equatable {
        public var accessToken: String
        public var refreshToken: String
        /// When the access token stops working.
        public var expiresAt: Date

        public init(accessToken: String, refreshToken: String, expiresAt: Date) {
            self.accessToken = accessToken
            self.refreshToken = refreshToken
            self.expiresAt = expiresAt
        }
    }

    public private(set) var current: Tokens
    /// The broker credentials of the latest sign-in or renewal (nil when made from saved tokens
    /// until the first renewal).
    public private(set) var mqtt: Components.Schemas.MQTTCredentials?
    /// Called with each renewal's tokens (to keep them where the next launch finds them).
    public var onRenewal: (@Sendable (Tokens) -> Void)?
    private let client: Client
    private let renewBefore: Duration
    private var refreshing: Task<Renewal, any Error>?

    /// What a renewal answers: the tokens and the broker credentials that go with them.
    private struct Renewal {
        let tokens: Tokens
        let mqtt: Components.Schemas.MQTTCredentials
    }

    /// - Parameters:
    ///   - client: a client of the same server (``ParleyREST/client(baseURL:accessToken:)``
    ///     without a token: the refresh is the refresh token's own authority).
    ///   - renewBefore: how long before its expiry an access token is renewed.
    public init(
        _ tokens: Tokens, mqtt: Components.Schemas.MQTTCredentials? = nil, client: Client,
        renewBefore: Duration = .seconds(30)
    ) {
        current = tokens
        self.mqtt = mqtt
        self.client = client
        self.renewBefore = renewBefore
    }

    /// The tokens of a sign-in's answer (`POST /v1/auth/login`, `/token` or `/refresh`).
    public init(login: Components.Schemas.Login, client: Client, renewBefore: Duration = .seconds(30)) {
        self.init(Self.tokens(of: login), mqtt: login.mqtt, client: client, renewBefore: renewBefore)
    }

    public func setOnRenewal(_ handler: (@Sendable (Tokens) -> Void)?) { onRenewal = handler }

    /// An access token good for at least `renewBefore`: the current one, or a renewed one.
    public func accessToken() async throws -> String {
        if current.expiresAt.timeIntervalSinceNow > renewBefore.seconds { return current.accessToken }
        return try await renewed().tokens.accessToken
    }

    /// Broker credentials good for at least `renewBefore`: the current ones, or a renewal's.
    public func mqttCredentials() async throws -> Components.Schemas.MQTTCredentials {
        if let mqtt, mqtt.expiresAt.timeIntervalSinceNow > renewBefore.seconds { return mqtt }
        return try await renewed().mqtt
    }

    /// Renews after the server refused `rejected` (a 401): unless someone renewed since.
    public func renew(after rejected: String) async throws -> String {
        guard rejected == current.accessToken else { return current.accessToken }
        return try await renewed().tokens.accessToken
    }

    private func renewed() async throws -> Renewal {
        if let refreshing { return try await refreshing.value }
        let client = self.client
        let refreshToken = current.refreshToken
        let refresh = Task {
            let login = try await client.postV1AuthRefresh(body: .json(.init(refreshToken: refreshToken))).ok.body.json
            return Renewal(tokens: Self.tokens(of: login), mqtt: login.mqtt)
        }
        refreshing = refresh
        do {
            let renewal = try await refresh.value
            refreshing = nil
            current = renewal.tokens
            mqtt = renewal.mqtt
            onRenewal?(renewal.tokens)
            return renewal
        } catch {
            refreshing = nil
            throw error
        }
    }

    private static func tokens(of login: Components.Schemas.Login) -> Tokens {
        Tokens(
            accessToken: login.accessToken, refreshToken: login.refreshToken,
            expiresAt: Date(timeIntervalSinceNow: TimeInterval(login.expiresIn)))
    }
}

extension Duration {
    /// The duration in seconds, for comparing with `TimeInterval`s.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
