import Crypto
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import ParleyCore
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// An app's identity provider for the tests: an HTTPS server on loopback, with a certificate
/// of a test authority, serving a JWKS (with `Cache-Control`) of keys the test publishes, and
/// signing tokens with them (RSA, P-256, Ed25519).
public final class TestIssuer: Sendable {
    /// Parley's outbound rule opened to the issuer's loopback addresses (`localhost` may resolve
    /// to both families).
    public static let loopback = OutboundRule(allowed: [AddressRange("127.0.0.0/8")!, AddressRange("::1/128")!])

    /// A signing key under its key id.
    public struct Key: Sendable {
        public enum Material: Sendable {
            case rsa(_RSA.Signing.PrivateKey)
            case p256(P256.Signing.PrivateKey)
            case ed25519(Curve25519.Signing.PrivateKey)
        }

        public let kid: String
        public let material: Material

        public static func rsa(_ kid: String) throws -> Key {
            Key(kid: kid, material: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)))
        }
        public static func p256(_ kid: String) -> Key { Key(kid: kid, material: .p256(P256.Signing.PrivateKey())) }
        public static func ed25519(_ kid: String) -> Key {
            Key(kid: kid, material: .ed25519(Curve25519.Signing.PrivateKey()))
        }

        /// The JWS `alg` of the key.
        public var algorithm: String {
            switch material {
            case .rsa: "RS256"
            case .p256: "ES256"
            case .ed25519: "EdDSA"
            }
        }

        /// The public key as one JWK of a JWKS.
        public var jwk: String {
            var fields = ["kid": kid]
            switch material {
            case .rsa(let key):
                let primitives = try! key.publicKey.getKeyPrimitives()
                fields["kty"] = "RSA"
                fields["use"] = "sig"
                fields["alg"] = "RS256"
                fields["n"] = Base64URL.encode(Array(primitives.modulus))
                fields["e"] = Base64URL.encode(Array(primitives.publicExponent))
            case .p256(let key):
                let raw = Array(key.publicKey.rawRepresentation)
                fields["kty"] = "EC"
                fields["crv"] = "P-256"
                fields["x"] = Base64URL.encode(Array(raw[0..<32]))
                fields["y"] = Base64URL.encode(Array(raw[32..<64]))
            case .ed25519(let key):
                fields["kty"] = "OKP"
                fields["crv"] = "Ed25519"
                fields["x"] = Base64URL.encode(Array(key.publicKey.rawRepresentation))
            }
            let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }

        func sign(_ input: Data) throws -> [UInt8] {
            switch material {
            case .rsa(let key): Array(try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)
            case .p256(let key): Array(try key.signature(for: input).rawRepresentation)
            case .ed25519(let key): Array(try key.signature(for: input))
            }
        }
    }

    /// The `iss` its tokens carry, and the `aud` they name.
    public let issuer: String
    public let audience = "parley-test-app"
    public let authority: TestCertificateAuthority
    public let port: Int
    private let server: ServiceGroup
    private let running: Task<Void, any Error>
    private let state: IssuerState

    public var jwksURL: String { "https://localhost:\(port)/jwks" }
    /// Times the JWKS was read.
    public var reads: Int { state.lock.withLock { $0.reads } }

    /// One entry of an issuers file for this issuer, trusted for `algorithms`.
    public func entry(algorithms: [String] = ["RS256", "ES256", "EdDSA"], claims: String? = nil) -> String {
        let names = algorithms.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"issuer":"\#(issuer)","audience":"\#(audience)","jwksUrl":"\#(jwksURL)","algorithms":[\#(names)]"#
            + (claims.map { #","claims":\#($0)"# } ?? "") + "}"
    }

    /// Serves `keys` from now on, with `Cache-Control: max-age` (none when nil).
    public func publish(_ keys: [Key], maxAge: Int? = 300) {
        let document = #"{"keys":["# + keys.map(\.jwk).joined(separator: ",") + "]}"
        state.lock.withLock { $0 = (document, maxAge.map { "public, max-age=\($0)" }, $0.reads) }
    }

    /// Serves `document` as it is (not a key set, or too large to be one).
    public func publish(raw document: String) {
        state.lock.withLock { $0 = (document, nil, $0.reads) }
    }

    /// A token signed by `key` with `claims` (raw JSON values by name; "-" leaves one out),
    /// on top of valid ones for `subject`; `algorithm` overrides the header's `alg`.
    public func token(
        _ key: Key, subject: String = "user-1", claims changes: [String: String] = [:], algorithm: String? = nil,
        kid: String? = nil
    ) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims = [
            "iss": "\"\(issuer)\"", "aud": "\"\(audience)\"", "sub": "\"\(subject)\"", "iat": "\(now)",
            "exp": "\(now + 600)",
        ]
        for (name, value) in changes { claims[name] = value == "-" ? nil : value }
        let header = #"{"alg":"\#(algorithm ?? key.algorithm)","kid":"\#(kid ?? key.kid)","typ":"JWT"}"#
        let payload =
            "{" + claims.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(try key.sign(Data(input.utf8)))
    }

    private init(
        issuer: String, authority: TestCertificateAuthority, port: Int, server: ServiceGroup,
        running: Task<Void, any Error>, state: IssuerState
    ) {
        self.issuer = issuer
        self.authority = authority
        self.port = port
        self.server = server
        self.running = running
        self.state = state
    }

    /// Starts the issuer's HTTPS server on a free loopback port, publishing `keys`.
    public static func start(_ keys: [Key], maxAge: Int? = 300) async throws -> TestIssuer {
        let authority = try TestCertificateAuthority()
        let state = IssuerState()
        let router = Router()
        router.get("jwks") { _, _ in
            let (document, cacheControl) = state.read()
            var headers: HTTPFields = [.contentType: "application/jwk-set+json"]
            if let cacheControl { headers[.cacheControl] = cacheControl }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: document)))
        }
        let logger = Logger(label: "test-issuer", factory: { _ in SwiftLogNoOpLogHandler() })
        let ready = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: try authority.serverTLS()),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { ready.continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        let group = ServiceGroup(configuration: configuration)
        let running = Task {
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
            throw TestEnvironmentError("the test issuer did not start")
        }
        let issuer = TestIssuer(
            issuer: "https://issuer-\(UUID().uuidString.prefix(8)).test", authority: authority, port: port,
            server: group, running: running, state: state)
        issuer.publish(keys, maxAge: maxAge)
        return issuer
    }

    public func stop() async {
        await server.triggerGracefulShutdown()
        _ = try? await running.value
    }
}

/// What the issuer's server serves, and how often it was asked.
private final class IssuerState: Sendable {
    let lock = Mutex<(document: String, cacheControl: String?, reads: Int)>((#"{"keys":[]}"#, nil, 0))

    /// The document and its `Cache-Control`, counting the read.
    func read() -> (String, String?) {
        lock.withLock { state in
            state.reads += 1
            return (state.document, state.cacheControl)
        }
    }
}
