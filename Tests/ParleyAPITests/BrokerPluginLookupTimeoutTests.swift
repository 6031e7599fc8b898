import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The plugin fails closed: a lookup Parley does not answer within the plugin's timeout is
/// a denial — not an allowance, and not a broker waiting on it.
struct BrokerPluginLookupTimeoutTests {
    @Test func aSubscriptionParleyDoesNotAnswerForIsDeniedWhenTheLookupTimesOut() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let broker = try await PluginBroker(
            tokenKeyBase64: BrokerPluginTests.keyBase64, serverUsername: BrokerPluginTests.server.username,
            serverPassword: BrokerPluginTests.server.password,
            aclURL: "http://127.0.0.1:\(silent.port)/internal/broker/acl", lookupTimeout: .milliseconds(300))
        let key = try MQTTTokenKey(bytes: Array(repeating: 42, count: 32))
        let token = MQTTToken(
            userID: 7, clientID: "silent-acl", sessionID: 1, expiresAt: Int64(Date().timeIntervalSince1970) + 600)
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                port: broker.port, username: "7", password: token.signed(with: key), clientID: "silent-acl",
                keepAlive: .seconds(5), acknowledgementTimeout: .seconds(10)),
            logger: .quiet)
        try client.start()
        try await client.waitUntilConnected(timeout: .seconds(5))
        // Refused by the broker (a SUBACK failure code), not a wait for an acknowledgement that
        // never comes.
        await #expect(throws: MQTTError.self) {
            do {
                try await client.subscribe(Topic.room("AAAAAAAAAAAAAAAAAAAAAA"))
            } catch let error as MQTTError {
                #expect(error.code == -102, "\(error)")
                throw error
            }
        }
        await client.shutdown()
        await broker.stop()
    }
}

/// A loopback port that accepts connections (the kernel completes them) and never answers.
final class SilentListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            _ = Glibc.close(descriptor)
            throw TestEnvironmentError("no silent listener: errno \(errno)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
