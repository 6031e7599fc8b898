import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParleyCore
import ParleyRedis
import Testing

@testable import ParleyAPI

struct ProblemResponseTests {
    struct Secret: Error, CustomStringConvertible {
        var description: String { "connection to db-internal-7:5432 failed, password=hunter2" }
    }

    let routes: (Router<ParleyRequestContext>) -> Void = { router in
        router.get("/test/invalid") { _, _ -> Response in
            throw ParleyError.invalidRequest("limit must be 1 to 200", field: "limit")
        }
        router.get("/test/internal") { _, _ -> Response in throw Secret() }
        router.get("/test/unavailable") { _, _ -> Response in throw RedisError.connection("db-internal-7 refused") }
        router.get("/test/refused") { _, _ -> Response in throw RedisError.server("WRONGTYPE db-internal-7") }
        router.get("/test/too-large") { _, _ -> Response in throw HTTPError(.contentTooLarge) }
        router.post("/test/echo") { request, context -> Response in
            struct Body: Decodable { let name: String }
            _ = try await request.decode(as: Body.self, context: context)
            return Response(status: .noContent)
        }
    }

    @Test func anUnknownPathIsANotFoundProblem() async throws {
        try await withPublicRouter { client in
            try await client.execute(uri: "/no/such/path", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                let body = try problem(response)
                #expect(body.code == "not-found")
                #expect(body.status == 404)
                #expect(body.type == "https://parley.dev/problems/not-found")
            }
        }
    }

    @Test func aDomainErrorKeepsItsCodeDetailAndField() async throws {
        try await withPublicRouter(extend: routes) { client in
            try await client.execute(uri: "/test/invalid", method: .get) { response in
                #expect(response.status == .badRequest)
                let body = try problem(response)
                #expect(body.code == "invalid-request")
                #expect(body.detail == "limit must be 1 to 200")
                #expect(body.field == "limit")
            }
        }
    }

    @Test func aDependencyThatIsDownIsA503WithRetryAfterAndWithoutItsText() async throws {
        try await withPublicRouter(extend: routes) { client in
            try await client.execute(uri: "/test/unavailable", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "5")
                #expect(!String(buffer: response.body).contains("db-internal"))
                let code = try problem(response).code
                #expect(code == "unavailable")
            }
            // A dependency that answered with an error is not down: still an internal error.
            try await client.execute(uri: "/test/refused", method: .get) { response in
                #expect(response.status == .internalServerError)
                #expect(response.headers[.retryAfter] == nil)
                #expect(!String(buffer: response.body).contains("db-internal"))
            }
        }
    }

    @Test func anUnexpectedErrorIsA500WithoutItsText() async throws {
        try await withPublicRouter(extend: routes) { client in
            try await client.execute(uri: "/test/internal", method: .get) { response in
                #expect(response.status == .internalServerError)
                let text = String(buffer: response.body)
                #expect(!text.contains("hunter2") && !text.contains("db-internal"))
                let code = try problem(response).code
                #expect(code == "internal")
            }
        }
    }

    @Test func frameworkErrorsKeepTheirStatusWithAStableCode() async throws {
        try await withPublicRouter(extend: routes) { client in
            try await client.execute(uri: "/test/too-large", method: .get) { response in
                #expect(response.status == .contentTooLarge)
                let code = try problem(response).code
                #expect(code == "too-large")
            }
            try await client.execute(
                uri: "/test/echo", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{not json")
            ) { response in
                #expect(response.status == .badRequest)
                let code = try problem(response).code
                #expect(code == "invalid-request")
            }
        }
    }

    @Test func everyResponseCarriesARequestID() async throws {
        try await withPublicRouter { client in
            try await client.execute(
                uri: "/health/live", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "trace-42"]
            ) {
                #expect($0.headers[HTTPField.Name("X-Request-Id")!] == "trace-42")
                // Once, and kept out of HTTP/2's header table: every answer's is different.
                let fields = $0.headers[fields: HTTPField.Name("X-Request-Id")!]
                #expect(fields.count == 1 && fields.first?.indexingStrategy == .avoid)
            }
            // An id that could inject into logs is replaced by a generated one.
            try await client.execute(
                uri: "/nope", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "bad id\twith tab"]
            ) { response in
                let id = response.headers[HTTPField.Name("X-Request-Id")!]
                #expect(id != nil && id != "bad id\twith tab")
            }
        }
    }
}
