/// An error whose code and detail are safe to show to a client.
///
/// Every failure that reaches a client is one of these; anything else is reported as an
/// internal error without its text. The API target maps codes to HTTP statuses in one place.
public struct ParleyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, kebab-case identifier clients may branch on. Closed: a new code is added
    /// here, and the API's status mapping (exhaustive) must then place it.
    public enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible, Codable {
        case invalidRequest = "invalid-request"
        case unauthorized
        case forbidden
        case notFound = "not-found"
        case methodNotAllowed = "method-not-allowed"
        case conflict
        case tooLarge = "too-large"
        /// A body that is not of the media type the route reads (JSON routes: `application/json`).
        case unsupportedMediaType = "unsupported-media-type"
        case rateLimited = "rate-limited"
        case unavailable
        case internalError = "internal"
        /// A message's file is not one of the sender's uploads.
        case fileUnavailable = "file-unavailable"
        case emailTaken = "email-taken"
        case invalidCredentials = "invalid-credentials"
        /// A token exchange's subject token is refused (the reason is only logged).
        case invalidToken = "invalid-token"
        case registrationClosed = "registration-closed"
        /// An edit after `PARLEY_MESSAGE_EDIT_WINDOW` seconds.
        case editWindowPassed = "edit-window-passed"
        /// An edit of, or a reaction to, a deleted message.
        case messageDeleted = "message-deleted"
        /// A new key on a message that has 20.
        case tooManyReactions = "too-many-reactions"
        /// The other user of a two-party room blocked the caller.
        case blocked
        /// The room is archived: read-only.
        case roomArchived = "room-archived"
        /// An administrator deactivated the account: it cannot sign in.
        case accountDeactivated = "account-deactivated"
        /// The change would leave a room without a direct admin (the last one leaving or
        /// stepping down).
        case lastAdmin = "last-admin"
        /// An upload beyond the user's storage quota (`PARLEY_STORAGE_QUOTA_BYTES`).
        case quotaExceeded = "quota-exceeded"
        /// The message hook (`PARLEY_MESSAGE_HOOK_URL`) rejected the message, or did not
        /// answer under `PARLEY_MESSAGE_HOOK_FAILURE=reject`.
        case rejectedByPolicy = "rejected-by-policy"

        public var description: String { rawValue }
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

    /// A list's cursor this server did not issue (or one of another list): one wording for
    /// every list, whichever layer reads the cursor.
    public static let foreignCursor = invalidRequest("cursor is not one this server issued", field: "cursor")

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
