import HTTPTypes
import Hummingbird
import Testing

@testable import ParleyAPI

/// Whose word names the client behind a proxy.
struct TrustedProxiesTests {
    let proxies = TrustedProxies(cidrs: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"])!

    func address(peer: String, _ fields: HTTPFields) -> String? { proxies.clientAddress(peer: peer, headers: fields) }

    @Test func cidrsParseAndMatch() {
        #expect(proxies.trusts("10.200.3.4") && proxies.trusts("127.0.0.1") && proxies.trusts("fd12::1"))
        #expect(!proxies.trusts("11.0.0.1") && !proxies.trusts("127.0.0.2") && !proxies.trusts("fe80::1"))
        #expect(!proxies.trusts("not an address"))
        for bad in ["10.0.0.0/33", "nonsense", "::/129", "1.2.3.4/-1"] { #expect(TrustedProxies(cidrs: [bad]) == nil) }
        #expect(TrustedProxies(cidrs: ["0.0.0.0/0"])?.trusts("8.8.8.8") == true)
    }

    @Test func aDirectClientsHeadersAreIgnored() {
        #expect(address(peer: "203.0.113.9", [.xForwardedFor: "198.51.100.1"]) == "203.0.113.9")
        #expect(address(peer: "203.0.113.9", [.forwarded: "for=198.51.100.1"]) == "203.0.113.9")
    }

    @Test func theChainIsReadFromTheRightUpToTheFirstUntrustedHop() {
        // The client forged the first entry; the proxy appended the address it saw.
        #expect(address(peer: "10.0.0.5", [.xForwardedFor: "1.1.1.1, 198.51.100.7"]) == "198.51.100.7")
        #expect(address(peer: "10.0.0.5", [.xForwardedFor: "198.51.100.7, 10.0.0.9"]) == "198.51.100.7")
        #expect(address(peer: "10.0.0.5", [.xForwardedFor: "10.0.0.8, 10.0.0.9"]) == "10.0.0.8")
        #expect(address(peer: "10.0.0.5", [:]) == "10.0.0.5")
        // A malformed entry: the hop that wrote it is the client.
        #expect(address(peer: "10.0.0.5", [.xForwardedFor: "198.51.100.7, junk"]) == "10.0.0.5")
    }

    @Test func forwardedIsPreferredAndItsNodesAreUnwrapped() {
        let fields: HTTPFields = [
            .forwarded: #"for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https"#, .xForwardedFor: "1.2.3.4",
        ]
        #expect(address(peer: "10.0.0.5", fields) == "2001:db8:cafe::17")
        #expect(address(peer: "10.0.0.5", [.forwarded: #"proto=http;for="198.51.100.3:80""#]) == "198.51.100.3")
    }

    /// Through the real listener: the rate limits see the forwarded address.
    @Test func theRoutesSeeTheForwardedAddress() async throws {
        let server = try await LiveServer(trustedProxies: TrustedProxies(cidrs: ["127.0.0.0/8"])!) { router in
            router.get("/test/address") { _, context in context.clientAddress ?? "none" }
        }
        let url = "http://127.0.0.1:\(server.port(.cleartext))/test/address"
        #expect(try await curl([url]).body == "127.0.0.1")
        #expect(try await curl(["-H", "X-Forwarded-For: 6.6.6.6, 198.51.100.7", url]).body == "198.51.100.7")
        try await server.stop()
        let direct = try await LiveServer { router in
            router.get("/test/address") { _, context in context.clientAddress ?? "none" }
        }
        let directURL = "http://127.0.0.1:\(direct.port(.cleartext))/test/address"
        #expect(try await curl(["-H", "X-Forwarded-For: 198.51.100.7", directURL]).body == "127.0.0.1")
        try await direct.stop()
    }
}
