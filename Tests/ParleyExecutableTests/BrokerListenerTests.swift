import Foundation
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The local broker's listeners (`deploy/local/services`) take connections on loopback only:
/// on another address of this machine each port refuses. mosquitto 2.0.11's WebSocket listener
/// bound every interface with `listener PORT 127.0.0.1` alone.
struct BrokerListenerTests {
    /// An IPv4 address of this machine that is not loopback, if it has one.
    static let otherAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
            return String(cString: text)
        }
        return nil
    }()

    @Test(
        .enabled(
            if: otherAddress != nil,
            "this machine has no IPv4 address besides loopback: whether the broker listens beyond loopback is unchecked"
        ))
    func everyBrokerListenerRefusesConnectionsOnAnotherAddress() throws {
        let services = try TestServices.shared()
        let other = try #require(Self.otherAddress)
        for name in ["MQTT", "MQTT_TLS", "MQTT_WS"] {
            let port = services.port(name)
            #expect(Self.connects(to: "127.0.0.1", port: port) == 0, "\(name) port \(port) is not open on loopback")
            #expect(
                Self.connects(to: other, port: port) == ECONNREFUSED,
                "the broker's \(name) listener (port \(port)) takes connections on \(other)")
        }
    }

    /// 0 when a TCP connection to `address`:`port` is made, else the connect's errno.
    static func connects(to address: String, port: Int) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = in_port_t(UInt16(port).bigEndian)
        target.sin_addr.s_addr = inet_addr(address)
        let result = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0 ? 0 : errno
    }
}
