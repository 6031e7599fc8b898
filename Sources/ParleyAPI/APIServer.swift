import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import ParleyCore
import ServiceLifecycle

/// Builds Parley's HTTP listeners as `Service`s: the public router (``ParleyRoutes``) served
/// over TLS and cleartext, and the internal router on the internal listener.
public struct APIServer: Sendable {
    public let configuration: HTTPConfiguration
    let logger: Logger

    public init(configuration: HTTPConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Every configured listener, ready to run in a `ServiceGroup`.
    public func services(
        publicRouter: Router<ParleyRequestContext>, internalRouter: Router<ParleyRequestContext>,
        onListening: @escaping @Sendable (Listener, Int) async -> Void = { _, _ in }
    ) throws -> [any Service] {
        var services: [any Service] = []
        let (http1, http2) = (http1Configuration, http2Configuration)
        let streams = RouterResponder(publicRouter.buildResponder(), serverName: Self.serverName, logger: logger)
        if let port = configuration.port {
            services.append(
                application(
                    router: publicRouter,
                    server: .cleartextHTTP1AndH2C(router: streams, http1: http1, http2: http2),
                    host: configuration.host, port: port, listener: .cleartext, onListening: onListening))
        }
        if configuration.servesTLS, let port = configuration.tlsPort {
            services.append(
                application(
                    router: publicRouter,
                    server: try .tls(try tlsConfiguration(), router: streams, http1: http1, http2: http2),
                    host: configuration.host, port: port, listener: .tls, onListening: onListening))
        }
        if let port = configuration.internalPort {
            services.append(
                application(
                    router: internalRouter,
                    server: .http1(configuration: http1),
                    host: configuration.internalHost, port: port, listener: .internal, onListening: onListening))
        }
        return services
    }

    /// The `Server` header of every answer.
    static let serverName = "Parley"

    /// Which listener a port belongs to (reported once it is bound; port 0 picks a free one).
    public enum Listener: String, Sendable { case cleartext, tls, `internal` }

    private func application(
        router: Router<ParleyRequestContext>, server: HTTPServerBuilder, host: String, port: Int,
        listener: Listener, onListening: @escaping @Sendable (Listener, Int) async -> Void
    ) -> some Service {
        Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: Self.serverName),
            onServerRunning: { channel in await onListening(listener, channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    private var streamIdleTimeout: TimeAmount { .seconds(configuration.idleTimeout.components.seconds) }

    /// An HTTP/1.1 connection: problem+json for what its parser refuses, and a deadline for
    /// each next request head (slowloris).
    private var http1Configuration: HTTP1Channel.Configuration {
        let head = TimeAmount(configuration.requestHeadTimeout)
        return .init(
            additionalChannelHandlers: [MalformedRequestHandler(), RequestHeadDeadlineHandler(limit: head)],
            idleTimeout: streamIdleTimeout)
    }

    /// An HTTP/2 connection: its streams need neither of HTTP/1.1's handlers (a stream begins
    /// with its head, and no HTTP/1.1 parser runs there), which every request's stream would
    /// otherwise set up, arm a timer in and tear down.
    private var http2Configuration: HTTP2ChannelConfiguration {
        HTTP2ChannelConfiguration(
            idleTimeout: configuration.idleTimeout,
            gracefulCloseTimeout: .seconds(30),
            streamConfiguration: .init(idleTimeout: streamIdleTimeout))
    }

    private func tlsConfiguration() throws -> TLSConfiguration {
        guard let certificatePath = configuration.tlsCertificatePath, let keyPath = configuration.tlsKeyPath else {
            throw ParleyError(.internalError, "TLS certificate and key paths are required")
        }
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
    }
}
