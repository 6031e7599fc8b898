import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import ParleyCore
import ParleyPushSimulator
import _CryptoExtras

/// The APNs identity of the benchmarks' local APNs-protocol server; `deploy/bench/run` gives
/// Parley's worker the same (`PARLEY_APNS_KEY_ID`, `_TEAM_ID`, `_TOPIC`).
enum BenchAPNs {
    static let keyID = "BENCHKEY01"
    static let teamID = "BENCHTEAM1"
    static let topic = "app.parley.bench"

    /// Starts the local APNs-protocol server, verifying tokens signed by `signingKey`.
    static func simulator(
        certificate: String, key: String, signingKey: P256.Signing.PublicKey, latency: Duration = .zero,
        port: Int = 0
    ) async throws -> PushSimulator {
        try await PushSimulator.start(
            .init(
                certificatePath: certificate, keyPath: key, apnsKey: signingKey, apnsKeyID: keyID,
                apnsTeamID: teamID, apnsTopic: topic,
                fcmKey: try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey, fcmClientEmail: "bench@local",
                fcmProjectID: "bench", latency: latency, port: port))
    }
}

/// Bare APNs requests, the baseline of the push benchmarks: a precomputed provider token and
/// body over the same client library Parley's sender uses — what HTTP/2 alone costs.
struct BareAPNsClient: Sendable {
    let client: HTTPClient
    let baseURL: String
    let token: String

    /// - Parameter certificate: the local server's certificate, trusted as Parley's client does.
    init(baseURL: String, certificate: String, key: P256.Signing.PrivateKey) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificate)
        client = HTTPClient(configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        self.baseURL = baseURL
        token = try Self.providerToken(key: key)
    }

    /// POSTs `body` to a device token; returns the HTTP status.
    func post(deviceToken: String, body: ByteBuffer) async throws -> Int {
        var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        request.headers.add(name: "apns-topic", value: BenchAPNs.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.body = .bytes(body)
        let response = try await client.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 64 * 1024)
        return Int(response.status.code)
    }

    /// POSTs `count` pushes to distinct devices, `concurrency` in flight.
    func send(count: Int, concurrency: Int, body: ByteBuffer) async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            func add() {
                let device = String(format: "%064x", next)
                next += 1
                group.addTask { try await post(deviceToken: device, body: body) }
            }
            while next < min(count, concurrency) { add() }
            while try await group.next() != nil { if next < count { add() } }
        }
    }

    func shutdown() async throws { try await client.shutdown() }

    static func providerToken(key: P256.Signing.PrivateKey) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(BenchAPNs.keyID)"}"#.utf8))
        let claims = Base64URL.encode(
            Array(#"{"iat":\#(Int(Date().timeIntervalSince1970)),"iss":"\#(BenchAPNs.teamID)"}"#.utf8))
        let signature = try key.signature(for: Data("\(header).\(claims)".utf8))
        return "\(header).\(claims).\(Base64URL.encode(Array(signature.rawRepresentation)))"
    }
}
