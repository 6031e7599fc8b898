import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

#if !canImport(Darwin)
    import OpenAPIAsyncHTTPClient
#endif

/// Parley's REST API, generated from its OpenAPI document (`Client`, `Operations`,
/// `Components`), over the platform's HTTP client: URLSession on Apple's platforms,
/// AsyncHTTPClient elsewhere (URLSession's transport builds there too: the tests run the
/// client over both).
public enum ParleyREST {
    /// A client of the server at `baseURL` whose requests carry the access token `accessToken`
    /// gives at the time (none when it gives nil: sign-in, registration).
    public static func client(
        baseURL: URL, accessToken: @escaping @Sendable () async throws -> String? = { nil }
    ) -> Client {
        client(baseURL: baseURL, authorising: BearerToken(token: accessToken))
    }

    /// A client whose requests carry `tokens`' access token, renewed when due; a request the
    /// server refuses with 401 is sent once more with a renewed token when its body can be.
    public static func client(baseURL: URL, tokens: ParleyTokens) -> Client {
        client(baseURL: baseURL, authorising: RenewingBearerToken(tokens: tokens))
    }

    /// As ``client(baseURL:tokens:)`` (or without tokens, as ``client(baseURL:accessToken:)``),
    /// every problem answer thrown as a ``ParleyProblem``.
    static func throwingProblems(baseURL: URL, tokens: ParleyTokens?, transport: any ClientTransport) -> Client {
        let authorising: any ClientMiddleware =
            tokens.map { RenewingBearerToken(tokens: $0) } ?? BearerToken(token: { nil })
        // Outside the authorisation: a 401 it renews after is no problem yet.
        return client(baseURL: baseURL, middlewares: [ProblemAnswers(), authorising], transport: transport)
    }

    private static func client(baseURL: URL, authorising: some ClientMiddleware) -> Client {
        client(baseURL: baseURL, middlewares: [authorising])
    }

    /// The one place a client is made: Parley's timestamps, the transport, `middlewares`.
    private static func client(
        baseURL: URL, middlewares: [any ClientMiddleware], transport: any ClientTransport = platformTransport()
    ) -> Client {
        Client(
            serverURL: baseURL, configuration: Configuration(dateTranscoder: RFC3339Dates()),
            transport: transport, middlewares: middlewares)
    }

    /// The platform's HTTP client: URLSession on Apple's platforms, AsyncHTTPClient elsewhere.
    public static func platformTransport() -> any ClientTransport {
        #if canImport(Darwin)
            URLSessionTransport()
        #else
            AsyncHTTPClientTransport()
        #endif
    }
}

/// Adds `Authorization: Bearer …` to a request that has none.
struct BearerToken: ClientMiddleware {
    let token: @Sendable () async throws -> String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = try await token() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// Parley's timestamps: RFC 3339 in UTC with milliseconds (`2026-11-21T22:43:00.123Z`); read with
/// or without the fraction. The runtime's default (no fraction) cannot read Parley's answers.
struct RFC3339Dates: DateTranscoder {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSeconds = Date.ISO8601FormatStyle()

    func encode(_ date: Date) throws -> String { date.formatted(Self.withFraction) }

    func decode(_ text: String) throws -> Date {
        if let date = (try? Self.withFraction.parse(text)) ?? (try? Self.wholeSeconds.parse(text)) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an RFC 3339 timestamp: \(text)"))
    }
}

/// Adds the session's access token; after a 401, renews it (one refresh shared by every caller)
/// and sends the request again, once.
struct RenewingBearerToken: ClientMiddleware {
    let tokens: ParleyTokens

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        let token = try await tokens.accessToken()
        request.headerFields[.authorization] = "Bearer \(token)"
        let (response, answer) = try await next(request, body, baseURL)
        guard response.status == .unauthorized, body == nil || body?.iterationBehavior == .multiple else {
            return (response, answer)
        }
        request.headerFields[.authorization] = "Bearer \(try await tokens.renew(after: token))"
        return try await next(request, body, baseURL)
    }
}
