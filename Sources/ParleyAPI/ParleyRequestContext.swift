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
    /// The client's IP address, for per-address rate limits.
    public let clientAddress: String?

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

    public init(context: ParleyRequestContext) throws {
        guard let identity = context.identity else { throw ParleyError.unauthorized }
        // The parent's storage carries the matched path parameters and the request's logger.
        self.coreContext = context.coreContext
        self.identity = identity
        self.clientAddress = context.clientAddress
    }

    public var responseEncoder: JSONEncoder { .parley }
}

extension JSONEncoder {
    /// camelCase keys as declared, RFC 3339 UTC timestamps with milliseconds.
    public static var parley: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        return encoder
    }
}

/// RFC 3339 timestamps with milliseconds in UTC: `2026-11-21T22:43:00.123Z`.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }
}
