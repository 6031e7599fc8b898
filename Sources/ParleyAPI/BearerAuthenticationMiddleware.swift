import Foundation
import Hummingbird
import ParleyCore

/// Resolves `Authorization: Bearer <token>` to the caller's identity.
///
/// A missing, unknown, expired or revoked token is a 401 here, so the routes behind it see
/// only ``AuthenticatedRequestContext``.
public struct BearerAuthenticationMiddleware: RouterMiddleware {
    public typealias Context = ParleyRequestContext
    let sessions: any SessionRepository
    let cache: SessionCache

    public init(sessions: any SessionRepository, cache: SessionCache) {
        self.sessions = sessions
        self.cache = cache
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], header.count <= 1024,
            header.lowercased().hasPrefix("bearer ")
        else { throw ParleyError.unauthorized }
        let token = OpaqueToken(value: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        let hash = token.hash
        let now = Date()
        var identity = cache.identity(forTokenHash: hash, now: now)
        if identity == nil {
            identity = try await sessions.authenticate(accessTokenHash: hash, now: now)
            if let identity { cache.store(identity, forTokenHash: hash) }
        }
        guard let identity else {
            throw ParleyError(.unauthorized, "The access token is unknown, expired or revoked.")
        }
        var context = context
        context.identity = identity
        context.logger[metadataKey: "user_id"] = "\(identity.userID)"
        return try await next(request, context)
    }
}
