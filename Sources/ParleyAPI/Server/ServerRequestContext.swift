import Foundation
import Hummingbird
import ParleyCore

/// The context of `/v1/server/*`: the server key that called, found by ``ServerKeyMiddleware``.
public struct ServerRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let key: APIKey
    public let clientAddress: String?

    public init(context: ParleyRequestContext) throws {
        guard let key = context.serverKey else { throw ParleyError.unauthorized }
        self.coreContext = context.coreContext
        self.key = key
        self.clientAddress = context.clientAddress
    }

    /// 403 unless the key has `scope` (or `admin`).
    func require(_ scope: APIKeyScope) throws {
        guard key.allows(scope) else {
            throw ParleyError(.forbidden, "This key lacks the scope \(scope.rawValue).")
        }
    }

    public var responseEncoder: JSONEncoder { .parley }
}

/// Resolves `Authorization: Bearer pk_…` to its key (401 for none, or an unknown, revoked or
/// expired one; 429 past the key's budget), and records each use in the audit log.
public struct ServerKeyMiddleware: RouterMiddleware {
    public typealias Context = ParleyRequestContext
    let keys: APIKeyService
    let audit: any AuditLog

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let secret = AccessTokens.bearer(request), let key = try await keys.authenticate(secret) else {
            throw ParleyError(.unauthorized, "The server API takes a server key: Authorization: Bearer pk_….")
        }
        var context = context
        context.serverKey = key
        context.logger[metadataKey: "api_key_id"] = "\(key.id)"
        return try await audit.recordingCall(with: key, request, context: context, next: next)
    }
}
