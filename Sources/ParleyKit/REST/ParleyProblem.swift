import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A refusal the server answered with `application/problem+json`: its status, the contract's
/// `code` (`invalid-credentials`, `forbidden`, `rate-limited`…) and what went wrong.
public struct ParleyProblem: Error, Sendable, Hashable {
    public var status: Int
    public var code: String
    public var detail: String
    /// `Retry-After`, in seconds, when the answer has one (429, 503).
    public var retryAfter: Int?

    public init(status: Int, code: String, detail: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.detail = detail
        self.retryAfter = retryAfter
    }

    /// The problem inside an error a generated client's call threw, if it is one.
    public static func of(_ error: any Error) -> ParleyProblem? {
        (error as? ParleyProblem) ?? ((error as? ClientError)?.underlyingError as? ParleyProblem)
    }
}

/// Turns every problem answer into a thrown ``ParleyProblem``, so a caller handles refusals
/// once instead of per operation and status.
struct ProblemAnswers: ClientMiddleware {
    private struct Body: Decodable {
        let code: String?
        let detail: String?
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, answer) }
        var bytes = Data()
        if let answer { bytes = try await Data(collecting: answer, upTo: 64 * 1024) }
        let problem = try? JSONDecoder().decode(Body.self, from: bytes)
        throw ParleyProblem(
            status: response.status.code, code: problem?.code ?? "http-\(response.status.code)",
            detail: problem?.detail ?? response.status.reasonPhrase,
            retryAfter: response.headerFields[.retryAfter].flatMap { Int($0) })
    }
}
