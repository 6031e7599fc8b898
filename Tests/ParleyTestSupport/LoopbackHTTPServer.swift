import Hummingbird
import Logging
import ServiceLifecycle

/// A plain HTTP server on a free loopback port, for a test standing in for another party's
/// server (an OpenTelemetry collector, EMQX's management API): the router answers; ``stop()``
/// ends it.
public struct LoopbackHTTPServer: Sendable {
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    public let port: Int

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// - Parameter port: 0 for a free one; a port given again serves there again after ``stop()``.
    public static func start(_ router: Router<BasicRequestContext>, port: Int = 0) async throws -> LoopbackHTTPServer {
        let logger = Logger(label: "loopback-http", factory: { _ in SwiftLogNoOpLogHandler() })
        let ready = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { ready.continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger))
        let running = Task {
            // A server that fails to start ends the wait for its port below.
            defer { ready.continuation.finish() }
            try await group.run()
        }
        var bound = 0
        for await value in ready.stream {
            bound = value
            break
        }
        guard bound != 0 else {
            try await running.value
            throw TestEnvironmentError("the loopback HTTP server did not start")
        }
        return LoopbackHTTPServer(group: group, running: running, port: bound)
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }
}
