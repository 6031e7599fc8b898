import Foundation
import Hummingbird
import ParleyCore

/// Resolves `Authorization: Bearer <token>` to the caller's identity.
///
/// A missing, unknown, expired or revoked token is a 401 here, so the routes behind it see
/// only ``AuthenticatedRequestContext``.
public struct BearerAuthenticationMiddleware: RouterMiddleware {
    public typealias Context = ParleyRequestContext
    let tokens: AccessTokens

    public init(sessions: any SessionRepository, cache: SessionCache) {
        tokens = AccessTokens(sessions: sessions, cache: cache)
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let identity = try await tokens.caller(of: request)
        var context = context
        context.identity = identity
        context.logger[metadataKey: "user_id"] = "\(identity.userID)"
        return try await next(request, context)
    }
}

/// Access tokens to identities, through the per-instance cache.
public struct AccessTokens: Sendable {
    let sessions: any SessionRepository
    let cache: SessionCache

    public init(sessions: any SessionRepository, cache: SessionCache) {
        self.sessions = sessions
        self.cache = cache
    }

    /// The signed-in caller of a request: the bearer token of its `Authorization` header, or
    /// (`queryToken`, for file content: players send no headers) of `?access_token=`. A
    /// missing, unknown, expired or revoked token is `unauthorized`.
    func caller(of request: Request, queryToken: Bool = false) async throws -> AuthenticatedUser {
        let fromQuery = queryToken ? request.uri.queryParameters["access_token"].map(String.init) : nil
        guard let token = Self.bearer(request) ?? fromQuery else { throw ParleyError.unauthorized }
        guard let identity = try await identity(token) else {
            throw ParleyError(.unauthorized, "The access token is unknown, expired or revoked.")
        }
        return identity
    }

    /// The token of `Authorization: Bearer <token>`, when present and of a sane length.
    static func bearer(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.utf8.count <= 1024,
            String(decoding: header.utf8.prefix(7), as: UTF8.self).lowercased() == "bearer "
        else { return nil }
        return String(header.dropFirst(7).trimmingHTTPWhitespace())
    }

    /// The signed-in user of a token; nil when it is unknown, expired or revoked.
    func identity(_ token: String) async throws -> AuthenticatedUser? {
        guard token.utf8.count <= 1024 else { return nil }
        let hash = OpaqueToken(value: token).hash
        let now = Date()
        if let cached = cache.identity(forTokenHash: hash, now: now) { return cached }
        let identity = try await sessions.authenticate(accessTokenHash: hash, now: now)
        if let identity { cache.store(identity, forTokenHash: hash) }
        return identity
    }
}
