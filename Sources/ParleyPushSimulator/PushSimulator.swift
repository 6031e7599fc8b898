import Crypto
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ParleyCore
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// A real HTTP/2 server (TLS, ALPN `h2`) that speaks the push providers' protocols as
/// Parley uses them: APNs (`POST /3/device/{token}` with an ES256 provider token), FCM HTTP
/// v1 (the OAuth2 JWT-bearer token endpoint and `messages:send`) and a webhook.
///
/// It checks what the providers check — signatures, headers, body shape — records every
/// request with the problems it found, and answers as the provider would, or as scripted.
public final class PushSimulator: Sendable {
    public struct Configuration: Sendable {
        public var certificatePath: String
        public var keyPath: String
        public var apnsKey: P256.Signing.PublicKey
        public var apnsKeyID: String
        public var apnsTeamID: String
        public var apnsTopic: String
        public var fcmKey: _RSA.Signing.PublicKey
        public var fcmClientEmail: String
        public var fcmProjectID: String
        /// Added before every answer (a provider's round trip).
        public var latency: Duration
        /// Port on 127.0.0.1; 0 picks a free one.
        public var port: Int

        public init(
            certificatePath: String, keyPath: String, apnsKey: P256.Signing.PublicKey, apnsKeyID: String,
            apnsTeamID: String, apnsTopic: String, fcmKey: _RSA.Signing.PublicKey, fcmClientEmail: String,
            fcmProjectID: String, latency: Duration = .zero, port: Int = 0
        ) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.apnsKey = apnsKey
            self.apnsKeyID = apnsKeyID
            self.apnsTeamID = apnsTeamID
            self.apnsTopic = apnsTopic
            self.fcmKey = fcmKey
            self.fcmClientEmail = fcmClientEmail
            self.fcmProjectID = fcmProjectID
            self.latency = latency
            self.port = port
        }
    }

    /// How a push request is answered.
    public enum Answer: Sendable, Equatable {
        case success
        /// APNs 410 `Unregistered`; FCM 404 `UNREGISTERED`; webhook 410.
        case unregistered
        /// APNs 400 `BadDeviceToken`; FCM 400 `INVALID_ARGUMENT`; webhook 400.
        case badRequest
        case tooManyRequests(retryAfter: Int?)
        case serverError
    }

    /// What the script is told about a request: which provider, which token, and how many
    /// earlier requests carried the same token.
    public typealias Script = @Sendable (_ provider: PushProvider, _ token: String, _ attempt: Int) -> Answer

    public let configuration: Configuration
    let state: SimulatorState
    let group: ServiceGroup
    let running: Task<Void, any Error>
    public let port: Int

    public var baseURL: String { "https://127.0.0.1:\(port)" }
    public var fcmTokenURI: String { "\(baseURL)/token" }
    public var webhookURL: String { "\(baseURL)/webhook" }

    /// - Parameter eventLoopGroup: where the simulator's connections run; a test gives it loops
    ///   of its own, as a provider's servers are machines of their own.
    public static func start(
        _ configuration: Configuration, logger: Logger? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> PushSimulator {
        let logger = logger ?? Logger(label: "push-simulator", factory: { _ in SwiftLogNoOpLogHandler() })
        let ready = AsyncStream<Int>.makeStream()
        let state = SimulatorState()
        let router = Router()
        let simulator = Routes(configuration: configuration, state: state)
        simulator.add(to: router)
        let chain = try NIOSSLCertificate.fromPEMFile(configuration.certificatePath).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: configuration.keyPath, format: .pem)
        let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        let application = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(
                address: .hostname("127.0.0.1", port: configuration.port), serverName: "push-simulator"),
            onServerRunning: { channel in ready.continuation.yield(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(eventLoopGroup), logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger)
        // A client that never acknowledges the HTTP/2 close must not hold up stop().
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        let running = Task {
            // A server that fails to start ends the wait for its port below.
            defer { ready.continuation.finish() }
            try await group.run()
        }
        var port = 0
        for await value in ready.stream {
            port = value
            break
        }
        guard port != 0 else {
            try await running.value
            throw PushSimulatorError.didNotStart
        }
        return PushSimulator(configuration: configuration, state: state, group: group, running: running, port: port)
    }

    private init(
        configuration: Configuration, state: SimulatorState, group: ServiceGroup, running: Task<Void, any Error>,
        port: Int
    ) {
        self.configuration = configuration
        self.state = state
        self.group = group
        self.running = running
        self.port = port
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

    /// Decides the answers from now on.
    public func script(_ script: @escaping Script) {
        state.locked.withLock { $0.script = script }
    }

    public var received: [ReceivedPush] { state.locked.withLock { $0.received } }

    /// OAuth2 token requests FCM's token endpoint answered.
    public var tokenRequests: Int { state.locked.withLock { $0.tokenRequests } }

    /// Every OAuth2 access token issued so far stops working (FCM answers 401).
    public func revokeAccessTokens() {
        state.locked.withLock { $0.issuedAccessTokens = [] }
    }

    /// Every APNs provider token seen so far counts as expired (403 `ExpiredProviderToken`).
    public func expireProviderTokens() {
        state.locked.withLock { $0.expiredProviderTokens.formUnion($0.seenProviderTokens) }
    }

    public func clear() {
        state.locked.withLock {
            $0.received = []
            $0.attempts = [:]
        }
    }
}

/// The simulator's server ended before it listened.
public enum PushSimulatorError: Error {
    case didNotStart
}
