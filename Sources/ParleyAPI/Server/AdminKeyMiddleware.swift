import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/*` takes a signed-in administrator's access token, or a server key with the
/// `admin` scope: that acts as the administrator who issued it, while they still are one
/// (403 otherwise), within the key's budget, each call recorded in the audit log.
public struct AdminKeyMiddleware: RouterMiddleware {
    public typealias Context = ParleyRequestContext
    let keys: APIKeyService
    let audit: any AuditLog
    let tokens: BearerAuthenticationMiddleware

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let secret = AccessTokens.bearer(request), let key = try await keys.authenticate(secret) else {
            return try await tokens.handle(request, context: context, next: next)
        }
        var context = context
        context.serverKey = key
        context.logger[metadataKey: "api_key_id"] = "\(key.id)"
        return try await audit.recordingCall(with: key, request, context: context) { request, context in
            var context = context
            context.identity = try await keys.administrator(actingFor: key)
            return try await next(request, context)
        }
    }
}
