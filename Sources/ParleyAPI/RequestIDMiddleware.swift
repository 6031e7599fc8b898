import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id, in the logs (`request_id`) and in the `X-Request-Id` answer.
///
/// A client's own id (from a proxy or its own tracing) is kept when it is short and plain.
public struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let id = request.headers[.requestID].flatMap(Self.acceptable) ?? context.id
        var context = context
        context.logger[metadataKey: RequestIDKey.name] = "\(id)"
        var response = try await next(request, context)
        response.headers[fields: .requestID] = [Self.field(id)]
        return response
    }

    /// The answer's header, kept out of HTTP/2's header table: a value that never repeats
    /// would push out the ones that do (`content-type`, `server`), and the encoder compares
    /// every header of every answer with each entry the table holds (4 % of `serve`'s CPU for
    /// `/health/live` when the table was full of request ids).
    static func field(_ id: String) -> HTTPField {
        var field = HTTPField(name: .requestID, value: id)
        field.indexingStrategy = .avoid
        return field
    }

    static func acceptable(_ id: String) -> String? {
        guard (1...128).contains(id.utf8.count),
            id.utf8.allSatisfy({
                $0 == 0x2D || $0 == 0x5F || $0 == 0x2E || (0x30...0x39).contains($0)
                    || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            })
        else { return nil }
        return id
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
}

/// The logs' metadata key of a request's id (a JSON log line lifts it out as `requestId`).
public enum RequestIDKey {
    public static let name = "request_id"
}
