import HTTPTypes
import Hummingbird
import ParleyCore
import Tracing

/// Makes each request a span (``ParleyCore/PipelineTrace``): a REST send's is the root of
/// its message's trace, which the relay, the fan-out and the push continue.
///
/// A client's own `traceparent` is not followed: it would let any client choose the trace its
/// messages join and force them to be sampled, filling the exporter's queue. What the span
/// records is what an operator needs and a log collector may see: the method, the route (its
/// pattern, not the path), the status, the request id as answered (checked by
/// ``RequestIDMiddleware``), and an error status for a 5xx (which ``ProblemMiddleware`` has
/// already made a response). No query, header or body.
struct RequestTracingMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let method = request.method.rawValue
        let span = startSpan("HTTP \(method)", context: .topLevel, ofKind: .server)
        span.attributes["http.request.method"] = method
        var response: Response
        do {
            response = try await InstrumentationContext.$current.withValue(span.context) {
                try await next(request, context)
            }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            span.end()
            throw error
        }
        if let route = context.endpointPath {
            span.operationName = "\(method) \(route)"
            span.attributes["http.route"] = route
        }
        let status = Int(response.status.code)
        span.attributes["http.response.status_code"] = status
        span.attributes["parley.request_id"] = response.headers[.requestID]
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        // A recording span ends once the body is written (a download's span covers its
        // transfer). Any other ends now: wrapping the body in a closure would cost every
        // response Hummingbird's single write of head, body and end (three flushes, three
        // TLS records and three socket writes on HTTP/2).
        guard span.isRecording else {
            span.end()
            return response
        }
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            defer { span.end() }
            try await body.write(writer)
        }
        return response
    }
}
