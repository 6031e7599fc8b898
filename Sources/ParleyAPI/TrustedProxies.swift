import HTTPTypes
import Hummingbird

#if canImport(Glibc)
    import Glibc
#endif

/// The proxies whose `Forwarded` / `X-Forwarded-For` Parley believes (`PARLEY_TRUSTED_PROXIES`):
/// behind a load balancer every connection comes from it, and per-address rate limits would
/// count all clients as one. From anyone else those headers are the client's own words and
/// are ignored, or a client could pick the address its limits are counted under.
public struct TrustedProxies: Sendable {
    struct Network: Sendable, Equatable {
        let address: [UInt8]
        let prefix: Int

        func contains(_ other: [UInt8]) -> Bool {
            guard other.count == address.count else { return false }
            var bits = prefix
            for (a, b) in zip(address, other) where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                guard a & mask == b & mask else { return false }
                bits -= 8
            }
            return true
        }
    }

    let networks: [Network]

    public static let none = TrustedProxies(networks: [])

    init(networks: [Network]) { self.networks = networks }

    /// - Parameter cidrs: `10.0.0.0/8`, `fd00::/8` or a single address; nil for one that is not.
    public init?(cidrs: [String]) {
        var networks: [Network] = []
        for cidr in cidrs {
            let parts = cidr.split(separator: "/", maxSplits: 1).map(String.init)
            guard let address = Self.bytes(parts[0]) else { return nil }
            let prefix = parts.count == 2 ? Int(parts[1]) : address.count * 8
            guard let prefix, (0...address.count * 8).contains(prefix) else { return nil }
            networks.append(Network(address: address, prefix: prefix))
        }
        self.networks = networks
    }

    func trusts(_ address: String) -> Bool {
        guard let bytes = Self.bytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy; then the nearest
    /// address in the forwarding chain (read from the right, as each proxy appends) that is
    /// not itself a trusted proxy. A malformed entry ends the walk at the hop that added it.
    public func clientAddress(peer: String?, headers: HTTPFields) -> String? {
        guard let peer, !networks.isEmpty, trusts(peer) else { return peer }
        var address = peer
        for hop in Self.chain(headers).reversed() {
            guard Self.bytes(hop) != nil else { break }
            address = hop
            guard trusts(hop) else { break }
        }
        return address
    }

    /// The addresses of `Forwarded` (RFC 7239, preferred) or else `X-Forwarded-For`, left to right.
    static func chain(_ headers: HTTPFields) -> [String] {
        let forwarded = headers[values: .forwarded]
        if !forwarded.isEmpty {
            return forwarded.flatMap { $0.split(separator: ",") }.map { element in
                let pair = element.split(separator: ";").map { trimmed($0) }.first { $0.lowercased().hasPrefix("for=") }
                return pair.map { node(String($0.dropFirst(4))) } ?? ""
            }
        }
        return headers[values: .xForwardedFor].flatMap { $0.split(separator: ",") }.map { trimmed($0) }
    }

    /// `for=` node: `192.0.2.1`, `"192.0.2.1:80"`, `"[2001:db8::1]:4711"`.
    static func node(_ text: String) -> String {
        var node = trimmed(text, ["\""])
        if node.hasPrefix("["), let end = node.firstIndex(of: "]") {
            return String(node[node.index(after: node.startIndex)..<end])
        }
        if node.filter({ $0 == ":" }).count == 1, let colon = node.firstIndex(of: ":") {
            node = String(node[..<colon])
        }
        return node
    }

    static func bytes(_ address: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

extension HTTPField.Name {
    static let forwarded = Self("Forwarded")!
    static let xForwardedFor = Self("X-Forwarded-For")!
}

/// `text` without `characters` at either end.
private func trimmed(_ text: some StringProtocol, _ characters: Set<Character> = [" ", "\t"]) -> String {
    guard let first = text.firstIndex(where: { !characters.contains($0) }),
        let last = text.lastIndex(where: { !characters.contains($0) })
    else { return "" }
    return String(text[first...last])
}

/// Replaces the context's client address by the one ``TrustedProxies`` reads, for requests
/// from a trusted proxy.
struct ForwardedClientMiddleware: RouterMiddleware {
    let proxies: TrustedProxies

    func handle(
        _ request: Request, context: ParleyRequestContext,
        next: (Request, ParleyRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.clientAddress = proxies.clientAddress(peer: context.clientAddress, headers: request.headers)
        return try await next(request, context)
    }
}
