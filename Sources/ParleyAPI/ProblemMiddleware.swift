import HTTPTypes
import Hummingbird
import Logging
import ParleyCore

/// Turns every error thrown below it into `application/problem+json`.
///
/// Internal errors are logged with the request id and answered without their text, so no
/// stack trace, SQL or library message ever reaches a client.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ParleyError {
            if error.code == .internalError || error.code == .unavailable {
                context.logger.error(
                    "request failed", metadata: ["code": "\(error.code)", "detail": "\(error.detail)"])
            }
            var headers: HTTPFields = [:]
            if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
            if error.code == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="parley""# }
            return ProblemDetails(error).response(headers: headers)
        } catch {
            let problem = ProblemDetails(unexpected: error)
            if problem.status >= 500 {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            return problem.response()
        }
    }
}
