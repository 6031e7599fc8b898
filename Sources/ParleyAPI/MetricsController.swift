import Hummingbird
import Prometheus

/// `GET /metrics` in Prometheus text format (internal listener only).
public struct MetricsController: Sendable {
    let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    public func addRoutes(to router: Router<ParleyRequestContext>) {
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }
}
