import Foundation
import Hummingbird
import Logging
import ParleyTestSupport
import Prometheus
import ServiceLifecycle
import Synchronization

@testable import ParleyAPI

/// Parley's real listeners on free loopback ports, run in a `ServiceGroup` as `serve` does.
final class LiveServer: Sendable {
    let ports = PortBook()
    let group: ServiceGroup
    let running: Task<Void, any Error>

    /// - Parameter extend: adds test-only routes to the public router.
    init(
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), trustedProxies: TrustedProxies = .none,
        requestHeadTimeout: Duration = .seconds(60), idleTimeout: Duration = .seconds(300),
        extend: (Router<ParleyRequestContext>) -> Void = { _ in }
    ) async throws {
        let services = try TestServices.shared()
        let server = APIServer(
            configuration: HTTPConfiguration(
                port: 0, tlsPort: 0, tlsCertificatePath: services.certificatePath, tlsKeyPath: services.keyPath,
                internalPort: 0, idleTimeout: idleTimeout, requestHeadTimeout: requestHeadTimeout),
            logger: .quiet)
        let ports = self.ports
        let routes = ParleyRoutes.forTesting(registry: registry, trustedProxies: trustedProxies)
        let publicRouter = routes.publicRouter()
        extend(publicRouter)
        let listeners = try server.services(publicRouter: publicRouter, internalRouter: routes.internalRouter()) {
            listener, port in
            ports.set(listener, port)
        }
        var configuration = ServiceGroupConfiguration(services: listeners.map { .init(service: $0) }, logger: .quiet)
        // As in `parley serve`: a stop ends even if a connection hangs.
        configuration.maximumGracefulShutdownDuration = .seconds(30)
        group = ServiceGroup(configuration: configuration)
        let group = self.group
        running = Task { try await group.run() }
        for _ in 0..<200 where ports.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
    }

    func port(_ listener: APIServer.Listener) -> Int { ports.port(listener) }

    /// Starts graceful shutdown (what SIGTERM does) and waits for the group to finish.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }
}

/// What a stock client saw: `curl -w '%{http_version} %{http_code}'` plus the body.
struct CurlResult {
    let httpVersion: String
    let status: Int
    let body: String
}

func curl(_ arguments: [String]) async throws -> CurlResult {
    let result = try await Subprocess.run(
        "/usr/bin/curl", ["-sS", "--max-time", "20", "-w", "\n%{http_version} %{http_code}"] + arguments)
    guard result.status == 0 else { throw TestEnvironmentError("curl failed: \(result.standardError)") }
    var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
    let last = lines.removeLast().split(separator: " ")
    return CurlResult(httpVersion: String(last[0]), status: Int(last[1]) ?? 0, body: lines.joined(separator: "\n"))
}

/// The port each listener bound, reported as it starts.
final class PortBook: Sendable {
    private let ports = Mutex<[APIServer.Listener: Int]>([:])
    func set(_ listener: APIServer.Listener, _ port: Int) { ports.withLock { $0[listener] = port } }
    func port(_ listener: APIServer.Listener) -> Int { ports.withLock { $0[listener] ?? 0 } }
    var count: Int { ports.withLock { $0.count } }
}
