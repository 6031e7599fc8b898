import Hummingbird

/// A HEAD answer has no body on either protocol, whatever answered it: a route, a 404 for an
/// unknown path or a problem+json error.
///
/// HTTP/1.1's encoder drops a HEAD's body by itself, but over HTTP/2 a problem's DATA after
/// the HEADERS broke the stream and the server closed the whole connection without GOAWAY,
/// losing every other request in flight on it. The headers (`Content-Length` and
/// `Content-Type` of what GET would send) stay.
struct HeadResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let response = try await next(request, context)
        return request.method == .head ? response.createHeadResponse() : response
    }
}
