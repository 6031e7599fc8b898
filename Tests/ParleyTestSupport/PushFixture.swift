import Crypto
import Foundation
import NIOPosix
import ParleyCore
import ParleyPush
import ParleyPushSimulator
import ParleyRuntime
import _CryptoExtras

/// A running push simulator with the keys, credentials and senders that match it.
public struct PushFixture: Sendable {
    public static let apnsKeyID = "TESTKEY001"
    public static let apnsTeamID = "TESTTEAM01"
    public static let apnsTopic = "app.parley.tests"
    public static let fcmProjectID = "parley-tests"
    public static let fcmClientEmail = "push@parley-tests.iam.gserviceaccount.com"

    public let simulator: PushSimulator
    public let apnsKey: P256.Signing.PrivateKey
    public let fcmKey: _RSA.Signing.PrivateKey
    public let client: PushHTTPClient
    public let certificatePath: String
    /// The simulator's and the client's own event loops (see ``start(latency:)``).
    let loops: MultiThreadedEventLoopGroup

    /// RSA key generation is slow; one key serves every fixture of a test process. It is made
    /// on a thread of its own, and fixtures await it: a lazily initialised static would block
    /// every other first caller's thread (Swift concurrency's) until it is done.
    static let sharedFCMKey = Task {
        try await BlockingCall.run("parley-test-rsa-key") {
            Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        }.get()
    }

    public static func start(latency: Duration = .zero) async throws -> PushFixture {
        let services = try TestServices.shared()
        let apnsKey = P256.Signing.PrivateKey()
        let fcmKey = try await sharedFCMKey.value
        // Loops of its own, as Apple's and Google's servers are machines of their own, so a
        // handshake does not queue behind the work of the whole suite on NIO's two shared loops.
        // The connection still gets 15 s rather than the product's 5 s: when the suite starts,
        // two cores run ~200 tests' start-up in an unoptimised build (BoringSSL included), and
        // the first push of a run took 4.7 s to connect even with the provider tests one at a
        // time (six of ten concurrent ones passed 5 s). No thread was held meanwhile
        // (SchedulingWatchdogTests passed): the time is the CPU's, not a stall.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let simulator = try await PushSimulator.start(
                .init(
                    certificatePath: services.certificatePath, keyPath: services.keyPath,
                    apnsKey: apnsKey.publicKey, apnsKeyID: apnsKeyID, apnsTeamID: apnsTeamID, apnsTopic: apnsTopic,
                    fcmKey: fcmKey.publicKey, fcmClientEmail: fcmClientEmail, fcmProjectID: fcmProjectID,
                    latency: latency),
                eventLoopGroup: loops)
            return PushFixture(
                simulator: simulator, apnsKey: apnsKey, fcmKey: fcmKey,
                client: try PushHTTPClient(
                    caFile: services.certificatePath, connectTimeout: .seconds(15), eventLoopGroup: loops),
                certificatePath: services.certificatePath, loops: loops)
        } catch {
            try? await loops.shutdownGracefully()
            throw error
        }
    }

    /// Runs `body` with a started fixture and stops it afterwards, also when `body` throws:
    /// an HTTP client that is not shut down stops the whole test process when it is freed.
    public static func with<Result>(
        latency: Duration = .zero, _ body: (PushFixture) async throws -> Result
    ) async throws -> Result {
        let fixture = try await start(latency: latency)
        let result: Result
        do {
            result = try await body(fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
        return result
    }

    public func stop() async {
        try? await client.shutdown()
        await simulator.stop()
        try? await loops.shutdownGracefully()
    }

    public var apnsConfiguration: APNsConfiguration {
        APNsConfiguration(
            key: apnsKey, keyID: Self.apnsKeyID, teamID: Self.apnsTeamID, topic: Self.apnsTopic,
            baseURL: simulator.baseURL)
    }

    /// A service-account document as Google issues it, pointing at the simulator.
    public var serviceAccountJSON: Data {
        let document: [String: String] = [
            "type": "service_account", "project_id": Self.fcmProjectID, "private_key_id": "test-key-1",
            "private_key": fcmKey.pemRepresentation, "client_email": Self.fcmClientEmail,
            "token_uri": simulator.fcmTokenURI,
        ]
        return (try? JSONSerialization.data(withJSONObject: document)) ?? Data()
    }

    public func senders(webhookSecret: String? = "webhook-secret") throws -> [PushProvider: any PushSender] {
        [
            .apns: APNsSender(configuration: apnsConfiguration, client: client),
            .fcm: FCMSender(
                configuration: try FCMConfiguration(serviceAccountJSON: serviceAccountJSON, baseURL: simulator.baseURL),
                client: client),
            .webhook: WebhookSender(
                configuration: WebhookConfiguration(url: simulator.webhookURL, secret: webhookSecret), client: client),
        ]
    }

    /// Pushes received so far, waiting up to `limit` for at least `count`.
    public func received(atLeast count: Int, within limit: Duration = .seconds(10)) async throws -> [ReceivedPush] {
        let start = ContinuousClock.now
        while simulator.received.count < count && start.duration(to: .now) < limit {
            try await Task.sleep(for: .milliseconds(20))
        }
        return simulator.received
    }
}
