import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The router as Parley's HTTP/2 streams call it: what Hummingbird's `Application` wraps
/// around it for its own channels, kept the same (a context per request with its id in the
/// logger, an error that escapes every middleware answered 500 without its text, `Date` and
/// `Server` on every answer). See <doc:LeanHTTP2Streams>.
struct RouterResponder: Sendable {
    private let respond: @Sendable (Request, ParleyRequestContext) async throws -> Response
    private let serverName: String
    private let logger: Logger
    private let date = HTTPDateHeader()

    init<Responder: HTTPResponder>(_ responder: Responder, serverName: String, logger: Logger)
    where Responder.Context == ParleyRequestContext {
        self.respond = { try await responder.respond(to: $0, context: $1) }
        self.serverName = serverName
        self.logger = logger
    }

    /// The answer to `request`, which arrived on `channel`; never throws.
    func response(to request: Request, channel: any Channel) async -> Response {
        var logger = logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        var response: Response
        do {
            response = try await respond(request, ParleyRequestContext(source: .init(channel: channel, logger: logger)))
        } catch {
            logger.debug("Unrecognised Error", metadata: ["error.type": "\(String(reflecting: type(of: error)))"])
            response = Response(status: .internalServerError, body: .init())
        }
        response.headers[.date] = date.value
        response.headers[.server] = serverName
        return response
    }
}
