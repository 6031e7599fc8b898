import Foundation
import Hummingbird
import ParleyCore

/// How a call of a route is written in the audit log: its method and route pattern as the
/// action, its path as the target, the caller's address.
extension AuditLog {
    func record<Context: RequestContext>(
        _ actor: ServerActor, calling request: Request, context: Context, address: String?
    ) async throws {
        try await record(
            actor, action: "\(request.method.rawValue) \(context.endpointPath ?? request.uri.path)",
            target: request.uri.path, address: address)
    }

    /// A signed-in administrator's change of what acts on the server (keys, bots); an admin
    /// key's calls are recorded by ``AdminKeyMiddleware``.
    func recordAdministrator(_ request: Request, _ context: AuthenticatedRequestContext) async throws {
        guard context.serverKey == nil else { return }
        try await record(
            .user(context.identity.userID), calling: request, context: context, address: context.clientAddress)
    }

    /// Runs a call made with `key` and records it, refused (a missing scope, a bad body) or not:
    /// a refused use is a use too.
    func recordingCall(
        with key: APIKey, _ request: Request, context: ParleyRequestContext,
        next: (Request, ParleyRequestContext) async throws -> Response
    ) async throws -> Response {
        let outcome: Result<Response, any Error>
        do {
            outcome = .success(try await next(request, context))
        } catch {
            outcome = .failure(error)
        }
        try await record(.key(key), calling: request, context: context, address: context.clientAddress)
        return try outcome.get()
    }
}
