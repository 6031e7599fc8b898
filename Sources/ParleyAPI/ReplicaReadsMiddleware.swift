import Hummingbird
import ParleyCore

/// Lets a signed-in user's GET read from a PostgreSQL replica (``ParleyCore/ReplicaReads``)
/// unless the user wrote within the read-your-writes window, so a client always sees its own
/// writes; any other method marks its user a writer before the write (a read racing the
/// write's answer must not miss it) and again after it (a slow write must not use up the
/// window). When who wrote cannot be known (Redis down), reads go to the primary, which is
/// always right.
struct ReplicaReadsMiddleware: RouterMiddleware {
    typealias Context = AuthenticatedRequestContext
    let writers: any RecentWriters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let user = context.identity.userID
        guard request.method == .get || request.method == .head else {
            await mark(user, context: context)
            do {
                let response = try await next(request, context)
                await mark(user, context: context)
                return response
            } catch {
                await mark(user, context: context)
                throw error
            }
        }
        let recent = (try? await writers.wroteRecently(user)) ?? true
        return try await ReplicaReads.$allowed.withValue(!recent) { try await next(request, context) }
    }

    private func mark(_ user: Int64, context: Context) async {
        do {
            try await writers.wrote([user])
        } catch {
            context.logger.warning("could not mark a writer; reads may lag", metadata: ["error": "\(error)"])
        }
    }
}
