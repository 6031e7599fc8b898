import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ParleyAPI
import ParleyCore
import Prometheus

/// A probe whose answer a test controls.
struct StaticProbe: DependencyProbe {
    let name: String
    let up: Bool
    struct Down: Error {}
    func probe() async throws { if !up { throw Down() } }
}

extension APIServer {
    static func forTesting(
        probes: [any DependencyProbe] = [], configuration: HTTPConfiguration = HTTPConfiguration(),
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) -> APIServer {
        APIServer(configuration: configuration, probes: probes, registry: registry, logger: .quiet)
    }
}

/// Runs `body` against the public router in memory (no sockets).
func withPublicRouter(
    _ server: APIServer = .forTesting(),
    extend: (Router<ParleyRequestContext>) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    let app = Application(router: server.publicRouter(extend: extend), logger: .quiet)
    try await app.test(.router, body)
}

/// Decodes a problem+json body.
func problem(_ response: TestResponse) throws -> ProblemDetails {
    try JSONDecoder().decode(ProblemDetails.self, from: Data(buffer: response.body))
}
