/// Parley's HTTP listeners.
///
/// - The TLS listener (ALPN `h2`, falling back to `http/1.1`) is for clients on the network.
/// - The cleartext listener speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on one
///   port, for local use and behind a TLS-terminating proxy.
/// - The internal listener (loopback by default) serves metrics and, later, broker auth.
public struct HTTPConfiguration: Sendable {
    /// Address the TLS and cleartext listeners bind to.
    public var host: String
    /// Cleartext port; `nil` disables the listener.
    public var port: Int?
    /// TLS port; the listener runs when this and both PEM paths are set.
    public var tlsPort: Int?
    public var tlsCertificatePath: String?
    /// Secret file.
    public var tlsKeyPath: String?
    public var internalHost: String
    /// Internal port; `nil` disables the listener.
    public var internalPort: Int?
    /// Connections idle this long are closed.
    public var idleTimeout: Duration
    /// How long a connection may take to send a request's head, from its start or its last
    /// answer (``RequestHeadDeadlineHandler``).
    public var requestHeadTimeout: Duration
    /// How long `/health/ready` waits for each dependency.
    public var readinessTimeout: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int? = 8080,
        tlsPort: Int? = nil,
        tlsCertificatePath: String? = nil,
        tlsKeyPath: String? = nil,
        internalHost: String = "127.0.0.1",
        internalPort: Int? = 9090,
        idleTimeout: Duration = .seconds(300),
        requestHeadTimeout: Duration = .seconds(60),
        readinessTimeout: Duration = .seconds(2)
    ) {
        self.host = host
        self.port = port
        self.tlsPort = tlsPort
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.internalHost = internalHost
        self.internalPort = internalPort
        self.idleTimeout = idleTimeout
        self.requestHeadTimeout = requestHeadTimeout
        self.readinessTimeout = readinessTimeout
    }

    /// Whether the TLS listener is configured.
    public var servesTLS: Bool { tlsPort != nil && tlsCertificatePath != nil && tlsKeyPath != nil }
}
