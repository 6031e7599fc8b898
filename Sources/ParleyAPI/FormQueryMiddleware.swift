import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore

/// Query strings as stock clients write them, for every route, before any is matched.
///
/// - A `+` is a space (`application/x-www-form-urlencoded`, WHATWG URL): Python's httpx and
///   requests, `URLSearchParams` and Java's `URLEncoder` send `q=prilis+kun`, and a literal
///   plus as `%2B`. Hummingbird decodes only `%`-escapes, so the query is rewritten once
///   here (`+` to `%20`) and every parameter read anywhere means what the client meant.
/// - Parameters keep the rule of every text a client sends (``TextRule``): no NUL, which
///   PostgreSQL can neither store nor compare, so a cursor or `q` cannot reach it with one.
struct FormQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let request = Self.formDecoded(request)
        for (name, value) in request.uri.queryParameters
        where name.unicodeScalars.contains("\u{0}") || value.unicodeScalars.contains("\u{0}") {
            let field = String(name.filter { $0 != "\u{0}" })
            throw ParleyError.invalidRequest("\(field) must not contain NUL characters", field: field)
        }
        return try await next(request, context)
    }

    /// The request with its query's `+` written as `%20`; the path is left alone (a `+` in a
    /// path is a plus).
    static func formDecoded(_ request: Request) -> Request {
        guard let path = request.head.path, let mark = path.utf8.firstIndex(of: UInt8(ascii: "?")),
            path.utf8[mark...].contains(UInt8(ascii: "+"))
        else { return request }
        var head = request.head
        head.path = String(path[..<mark]) + path[mark...].replacingOccurrences(of: "+", with: "%20")
        return Request(head: head, body: request.body)
    }
}
