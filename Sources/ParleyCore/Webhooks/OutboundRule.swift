import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where Parley may send a request of its own (webhooks, the message hook, bots): `https`
/// only (unless ``allowHTTP``), and never to an address of the host's own networks (loopback,
/// private, link-local, shared, multicast, reserved, documentation, cloud metadata) unless it
/// lies in ``allowed``. Checked when a URL is registered and again before each request, on
/// the addresses its name resolves to; the request then goes to the checked address, so a
/// name that resolves anew to another address (DNS rebinding) reaches nothing new.
/// See <doc:OutboundRequests>.
public struct OutboundRule: Sendable, Equatable {
    /// `PARLEY_OUTBOUND_ALLOW_HTTP`.
    public let allowHTTP: Bool
    /// `PARLEY_OUTBOUND_ALLOW`: ranges opened despite their class (a test's receivers, a
    /// backend on the same private network).
    public let allowed: [AddressRange]

    public init(allowHTTP: Bool = false, allowed: [AddressRange] = []) {
        self.allowHTTP = allowHTTP
        self.allowed = allowed
    }

    /// A URL's parts a request needs; the address comes later (``OutboundTarget``).
    public struct Endpoint: Sendable, Equatable {
        public let url: URL
        public let host: String
        public let port: Int
    }

    /// The URL's scheme, host and port, or `invalid-request` naming `field`.
    public func endpoint(_ text: String, field: String = "url") throws(ParleyError) -> Endpoint {
        guard text.utf8.count <= 2000, let components = URLComponents(string: text), let url = components.url,
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else { throw ParleyError.invalidRequest("\(field) is not an absolute URL", field: field) }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            throw ParleyError.invalidRequest(
                allowHTTP ? "\(field) must be http or https" : "\(field) must be https", field: field)
        }
        guard components.user == nil, components.password == nil else {
            throw ParleyError.invalidRequest("\(field) may not carry credentials", field: field)
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return Endpoint(url: url, host: bare, port: components.port ?? (scheme == "https" ? 443 : 80))
    }

    /// Whether a request may go to `address`.
    public func permits(_ address: IPAddress) -> Bool {
        // An IPv6 form of an IPv4 address (mapped, NAT64, compatible) is that address.
        let address = address.embeddedIPv4 ?? address
        if allowed.contains(where: { $0.contains(address) }) { return true }
        if address.isIPv6, IPAddress.localNAT64.contains(address) { return false }
        return !IPAddress.refused.contains { $0.contains(address) }
    }

    /// The address to send to: every address the host resolves to must be permitted (a name
    /// that answers one refused address among others is refused too), and the first is used.
    public func target(_ endpoint: Endpoint, resolver: any AddressResolver, field: String = "url") async throws
        -> OutboundTarget
    {
        let addresses: [IPAddress]
        if let literal = IPAddress(endpoint.host) {
            addresses = [literal]
        } else {
            addresses = try await resolver.addresses(of: endpoint.host)
        }
        guard let first = addresses.first else {
            throw ParleyError.invalidRequest("\(field)'s host does not resolve", field: field)
        }
        guard addresses.allSatisfy(permits) else {
            throw ParleyError.invalidRequest(
                "\(field)'s host is an address Parley does not send to (see PARLEY_OUTBOUND_ALLOW)", field: field)
        }
        return OutboundTarget(endpoint: endpoint, address: first)
    }
}

/// A request's destination once checked: connect to `address`, ask for `endpoint`'s host
/// (its `Host` header, TLS name and certificate check).
public struct OutboundTarget: Sendable, Equatable {
    public let endpoint: OutboundRule.Endpoint
    public let address: IPAddress
}

/// Resolves host names (the system's resolver, on a thread of its own: it blocks).
public protocol AddressResolver: Sendable {
    /// Every address of `host`; empty when it does not resolve.
    func addresses(of host: String) async throws -> [IPAddress]
}

/// An IPv4 or IPv6 address.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes, or 16.
    public let bytes: [UInt8]

    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isIPv6: Bool { bytes.count == 16 }

    /// The IPv4 address an IPv6 one stands for: IPv4-mapped (`::ffff:a.b.c.d`), NAT64
    /// (`64:ff9b::a.b.c.d`) or IPv4-compatible (`::a.b.c.d`, deprecated).
    public var embeddedIPv4: IPAddress? {
        guard isIPv6 else { return nil }
        let head = Array(bytes.prefix(12))
        let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
        let nat64: [UInt8] = [0, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 8)
        let compatible: [UInt8] = Array(repeating: 0, count: 12)
        guard head == mapped || head == nat64 || (head == compatible && bytes[12...].contains { $0 != 0 }) else {
            return nil
        }
        // `::` and `::1` are IPv6's own, not IPv4-compatible forms.
        if head == compatible, bytes[12...] == [0, 0, 0, 1] { return nil }
        return IPAddress(bytes: Array(bytes.suffix(4)))
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = isIPv6 ? AF_INET6 : AF_INET
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(cString: buffer)
    }

    /// The classes no request goes to unless ``OutboundRule/allowed`` opens them.
    static let refused: [AddressRange] = [
        // IPv4: this network, private, shared (CGNAT, and Alibaba's metadata), loopback,
        // link-local (every cloud's metadata service), IETF, documentation, benchmarking,
        // multicast, reserved and broadcast.
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        // IPv6: unspecified, loopback, discard, documentation, unique local (AWS's metadata
        // fd00:ec2::254 among them), link-local, site-local, multicast.
        "::/128", "::1/128", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].map { AddressRange($0)! }
    /// Local-use NAT64 (RFC 8215): any IPv4 address behind it, so none is known to be safe.
    static let localNAT64 = AddressRange("64:ff9b:1::/48")!
}

/// An address range in CIDR notation (`10.0.0.0/8`, `fc00::/7`); one family only: an IPv4
/// range holds no IPv6 address.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    public let base: IPAddress
    public let prefix: Int

    public init?(_ cidr: String) {
        let parts = cidr.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let base = IPAddress(String(parts[0])) else { return nil }
        let bits = base.bytes.count * 8
        let prefix = parts.count == 2 ? Int(parts[1]) : bits
        guard let prefix, (0...bits).contains(prefix) else { return nil }
        self.base = base
        self.prefix = prefix
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        var remaining = prefix
        for (mine, theirs) in zip(base.bytes, address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(base)/\(prefix)" }

    /// `PARLEY_OUTBOUND_ALLOW`'s comma-separated ranges; nil naming the first that is none.
    public static func list(_ text: String) -> Result<[AddressRange], ParleyError> {
        var ranges: [AddressRange] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            guard let range = AddressRange(item) else {
                return .failure(ParleyError.invalidRequest("\(item) is not an address range (CIDR)"))
            }
            ranges.append(range)
        }
        return .success(ranges)
    }
}
