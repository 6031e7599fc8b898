import Foundation
import Hummingbird
import Logging
import NIOCore
import ParleyCore

/// The request context of every Parley route.
public struct ParleyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``BearerAuthenticationMiddleware`` when the request carries a valid token.
    public var identity: AuthenticatedUser?
    /// Set by ``ServerKeyMiddleware`` on `/v1/server/*`, and by ``AdminKeyMiddleware`` for an
    /// admin key on `/v1/admin/*`.
    public var serverKey: APIKey?
    /// The client's IP address, for per-address rate limits (a trusted proxy's forwarded
    /// address: ``ForwardedClientMiddleware``).
    public var clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    public var responseEncoder: JSONEncoder { .parley }
}

/// The context of routes that need a signed-in user: it cannot exist without an identity,
/// so handlers never unwrap one.
public struct AuthenticatedRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let identity: AuthenticatedUser
    public let clientAddress: String?
    /// On `/v1/admin/*`: the admin key the caller acts through (as the administrator who
    /// issued it), when it is not a signed-in administrator.
    public let serverKey: APIKey?

    public init(context: ParleyRequestContext) throws {
        guard let identity = context.identity else { throw ParleyError.unauthorized }
        // The parent's storage carries the matched path parameters and the request's logger.
        self.coreContext = context.coreContext
        self.identity = identity
        self.clientAddress = context.clientAddress
        self.serverKey = context.serverKey
    }

    /// Set by ``FileViewerMiddleware``: answers carry file links signed for the caller.
    public var fileViewer: FileViewer?

    public var responseEncoder: JSONEncoder { fileViewer?.encoder() ?? .parley }

    var answerUserInfo: [CodingUserInfoKey: any Sendable] { fileViewer?.userInfo ?? [:] }
}

/// A context whose JSON answers are written for its caller (``JSONResponse``): what its
/// `responseEncoder` carries, without building that encoder for every answer.
protocol AnswerUserInfoContext {
    var answerUserInfo: [CodingUserInfoKey: any Sendable] { get }
}

extension AuthenticatedRequestContext: AnswerUserInfoContext {}

extension JSONEncoder {
    /// camelCase keys as declared, RFC 3339 UTC timestamps with milliseconds.
    public static var parley: JSONEncoder { JSONCoding.encoder }
}
