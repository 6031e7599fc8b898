/// An error whose code and detail are safe to show to a client.
///
/// Every failure that reaches a client is one of these; anything else is reported as an
/// internal error without its text. The API target maps codes to HTTP statuses in one place.
public struct ParleyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, kebab-case identifier clients may branch on.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidRequest = Code(rawValue: "invalid-request")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let forbidden = Code(rawValue: "forbidden")
        public static let notFound = Code(rawValue: "not-found")
        public static let methodNotAllowed = Code(rawValue: "method-not-allowed")
        public static let conflict = Code(rawValue: "conflict")
        public static let tooLarge = Code(rawValue: "too-large")
        public static let rateLimited = Code(rawValue: "rate-limited")
        public static let unavailable = Code(rawValue: "unavailable")
        public static let internalError = Code(rawValue: "internal")
    }

    public let code: Code
    /// A human-readable explanation, written for the client; never an internal error text.
    public let detail: String
    /// The request field that failed validation, when there is one.
    public let field: String?
    /// Seconds the client should wait before retrying (rate limits).
    public var retryAfter: Int?

    public init(_ code: Code, _ detail: String, field: String? = nil) {
        self.code = code
        self.detail = detail
        self.field = field
        self.retryAfter = nil
    }

    public var description: String { "\(code): \(detail)" }

    public static func invalidRequest(_ detail: String, field: String? = nil) -> ParleyError {
        ParleyError(.invalidRequest, detail, field: field)
    }

    public static func notFound(_ detail: String = "The resource does not exist.") -> ParleyError {
        ParleyError(.notFound, detail)
    }

    public static func conflict(_ code: Code = .conflict, _ detail: String) -> ParleyError {
        ParleyError(code, detail)
    }

    public static func unavailable(_ detail: String) -> ParleyError {
        ParleyError(.unavailable, detail)
    }
}
