import Hummingbird
import ParleyCore

/// Lets a signed-in user's GET read from a PostgreSQL replica (``ParleyCore/ReplicaReads``)
/// unless the user wrote within the read-your-writes window, so a client always sees its own
/// writes; any other method marks its user a writer first (before the write: a read racing
/// the write's answer must not miss it). When who wrote cannot be known (Redis down), reads go
/// to the primary, which is always right.
struct ReplicaReadsMiddleware: RouterMiddleware {
    typealias Context = AuthenticatedRequestContext
    let writers: any RecentWriters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let user = context.identity.userID
        guard request.method == .get || request.method == .head else {
            do {
                try await writers.wrote([user])
            } catch {
                context.logger.warning("could not mark a writer; reads may lag", metadata: ["error": "\(error)"])
            }
            return try await next(request, context)
        }
        let recent = (try? await writers.wroteRecently(user)) ?? true
        return try await ReplicaReads.$allowed.withValue(!recent) { try await next(request, context) }
    }
}
