import Dispatch
import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Counts and times every request under the names Hummingbird's `MetricsMiddleware` uses
/// (`hb.requests`, `http.server.request.duration`, `hb.request.errors`,
/// `http.server.active_requests`), recorded when the handler has answered.
///
/// Hummingbird's own records once the body is written, which it does by wrapping every body in
/// a closure; that costs each response the single write of its head, body and end (three
/// flushes: three TLS records and three socket writes per HTTP/2 response). A response's time
/// here is to its head: a download's transfer is not in it (<doc:RequestCost>).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let instruments = RequestInstruments()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let active = instruments.active(request.method)
        active.increment()
        defer { active.decrement() }
        do {
            let response = try await next(request, context)
            instruments.answered(
                request, route: context.endpointPath ?? "Unknown", status: response.status, since: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            instruments.answered(request, route: context.endpointPath ?? "NotFound", status: status, since: start)
            instruments.failed(request, route: context.endpointPath ?? "NotFound", status: status)
            throw error
        }
    }
}

/// The instruments of each method, and of each route, method and status, made once.
private final class RequestInstruments: Sendable {
    private struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private struct Answered {
        let count: Counter
        let duration: Metrics.Timer
    }

    private let actives = Mutex<[HTTPRequest.Method: Meter]>([:])
    private let answers = Mutex<[Key: Answered]>([:])
    private let failures = Mutex<[Key: Counter]>([:])

    func active(_ method: HTTPRequest.Method) -> Meter {
        actives.withLock { meters in
            if let meter = meters[method] { return meter }
            let meter = Meter(
                label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)])
            meters[method] = meter
            return meter
        }
    }

    func answered(_ request: Request, route: String, status: HTTPResponse.Status, since start: UInt64) {
        let key = Key(route: route, method: request.method, status: status.code)
        let instruments = answers.withLock { answers in
            if let answered = answers[key] { return answered }
            let dimensions = Self.dimensions(key, statusName: "http.response.status_code")
            let answered = Answered(
                count: Counter(label: "hb.requests", dimensions: dimensions),
                duration: Metrics.Timer(
                    label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds))
            answers[key] = answered
            return answered
        }
        instruments.count.increment()
        instruments.duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
    }

    func failed(_ request: Request, route: String, status: HTTPResponse.Status) {
        let key = Key(route: route, method: request.method, status: status.code)
        let counter = failures.withLock { failures in
            if let counter = failures[key] { return counter }
            let counter = Counter(
                label: "hb.request.errors", dimensions: Self.dimensions(key, statusName: "error.type"))
            failures[key] = counter
            return counter
        }
        counter.increment()
    }

    private static func dimensions(_ key: Key, statusName: String) -> [(String, String)] {
        [("http.route", key.route), ("http.request.method", key.method.rawValue), (statusName, String(key.status))]
    }
}
