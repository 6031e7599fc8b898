import Hummingbird
import ParleyCore

/// Answers to a signed-in user carry file links signed for them, which open only while they
/// may read the file (<doc:SignedFileLinks>).
struct FileViewerMiddleware: RouterMiddleware {
    typealias Context = AuthenticatedRequestContext
    let links: FileLinks

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.fileViewer = FileViewer(links: links, userID: context.identity.userID)
        return try await next(request, context)
    }
}
