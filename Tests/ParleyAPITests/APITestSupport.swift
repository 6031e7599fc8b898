import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ParleyCore
import Prometheus

@testable import ParleyAPI

/// A probe whose answer a test controls.
struct StaticProbe: DependencyProbe {
    let name: String
    let up: Bool
    struct Down: Error {}
    func probe() async throws { if !up { throw Down() } }
}

extension ParleyRoutes {
    /// The routes of the HTTP layer alone (health, documents, metrics), or with `features`.
    static func forTesting(
        probes: [any DependencyProbe] = [], readinessTimeout: Duration = .seconds(2),
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), features: Features? = nil,
        broker: BrokerAuthController? = nil, trustedProxies: TrustedProxies = .none
    ) -> ParleyRoutes {
        ParleyRoutes(
            probes: probes, readinessTimeout: readinessTimeout, registry: registry, features: features, broker: broker,
            trustedProxies: trustedProxies)
    }
}

/// Runs `body` against the public router in memory (no sockets); `extend` adds test-only routes.
func withPublicRouter(
    _ routes: ParleyRoutes = .forTesting(),
    extend: (Router<ParleyRequestContext>) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    let router = routes.publicRouter()
    extend(router)
    try await Application(router: router, logger: .quiet).test(.router, body)
}

/// Decodes a problem+json body.
func problem(_ response: TestResponse) throws -> ProblemDetails {
    try JSONDecoder().decode(ProblemDetails.self, from: Data(buffer: response.body))
}
