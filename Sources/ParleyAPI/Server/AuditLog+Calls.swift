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
