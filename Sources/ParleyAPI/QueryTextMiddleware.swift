import Hummingbird
import ParleyCore

/// Query parameters keep the rule of every text a client sends (``TextRule``): no NUL, which
/// PostgreSQL can neither store nor compare. Checked once here, for every route, so that a
/// parameter read anywhere (`q` of a search, a cursor) cannot reach the database with one.
struct QueryTextMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        for (name, value) in request.uri.queryParameters
        where name.unicodeScalars.contains("\u{0}") || value.unicodeScalars.contains("\u{0}") {
            let field = String(name.filter { $0 != "\u{0}" })
            throw ParleyError.invalidRequest("\(field) must not contain NUL characters", field: field)
        }
        return try await next(request, context)
    }
}
