import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore

/// An RFC 9457 `application/problem+json` body: every error Parley answers has this shape.
public struct ProblemDetails: Codable, Sendable, Equatable {
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// Stable, kebab-case; what clients branch on.
    public var code: String
    /// The request field that failed validation.
    public var field: String?
    /// Per-dependency state, on readiness failures.
    public var checks: [String: ReadinessReport.Status]?

    public init(status: HTTPResponse.Status, code: String, detail: String, field: String? = nil) {
        self.type = "https://parley.dev/problems/\(code)"
        self.title = status.reasonPhrase
        self.status = status.code
        self.detail = detail
        self.code = code
        self.field = field
    }

    /// The one place a domain error becomes an HTTP status.
    public init(_ error: ParleyError) {
        self.init(
            status: Self.status(for: error.code), code: error.code.rawValue, detail: error.detail, field: error.field)
    }

    static func status(for code: ParleyError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidRequest, .fileUnavailable: .badRequest
        case .unauthorized, .invalidCredentials, .invalidToken: .unauthorized
        case .forbidden, .registrationClosed, .editWindowPassed, .blocked, .roomArchived,
            .accountDeactivated:
            .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict, .emailTaken, .messageDeleted, .tooManyReactions, .lastAdmin: .conflict
        case .tooLarge, .quotaExceeded: .contentTooLarge
        case .rejectedByPolicy: .unprocessableContent
        case .unsupportedMediaType: .unsupportedMediaType
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internalError: .internalServerError
        }
    }

    /// Seconds a client waits before retrying what a dependency could not serve: recovery
    /// takes seconds (pools reconnecting, a restarted server starting up).
    static let unavailableRetryAfter = 5

    /// The problem for an error that is not a `ParleyError`: framework errors keep their
    /// status with a generic text; a dependency that is down or did not answer is 503
    /// `unavailable`; anything else is an internal error with no detail.
    init(unexpected error: any Error) {
        if let error = error as? any DependencyError, error.isUnavailability {
            self.init(
                status: .serviceUnavailable, code: ParleyError.Code.unavailable.rawValue,
                detail: "A service Parley depends on is unavailable. Try again shortly.")
        } else if let error = error as? any HTTPResponseError {
            let status = error.status
            self.init(status: status, code: Self.code(for: status), detail: Self.detail(for: status))
        } else {
            self.init(
                status: .internalServerError, code: ParleyError.Code.internalError.rawValue,
                detail: "The server failed to answer this request.")
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status {
        case .badRequest: ParleyError.Code.invalidRequest.rawValue
        case .unauthorized: ParleyError.Code.unauthorized.rawValue
        case .forbidden: ParleyError.Code.forbidden.rawValue
        case .notFound: ParleyError.Code.notFound.rawValue
        case .methodNotAllowed: ParleyError.Code.methodNotAllowed.rawValue
        case .contentTooLarge: ParleyError.Code.tooLarge.rawValue
        case .unsupportedMediaType: ParleyError.Code.unsupportedMediaType.rawValue
        case .tooManyRequests: ParleyError.Code.rateLimited.rawValue
        case .serviceUnavailable: ParleyError.Code.unavailable.rawValue
        default: status.code >= 500 ? ParleyError.Code.internalError.rawValue : ParleyError.Code.invalidRequest.rawValue
        }
    }

    static func detail(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "No resource at this path."
        case .methodNotAllowed: "This method is not allowed on this path."
        case .contentTooLarge: "The request body is too large."
        case .badRequest: "The request is malformed."
        default: status.reasonPhrase
        }
    }

    /// The problem+json body.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    func response(headers extra: HTTPFields = [:]) -> Response {
        let body = encoded()
        var headers = extra
        headers[.contentType] = "application/problem+json"
        if status == 503 && headers[.retryAfter] == nil { headers[.retryAfter] = String(Self.unavailableRetryAfter) }
        headers[.contentLength] = String(body.count)
        return Response(
            status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
