import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A bare MQTT 3.1.1 client, as stock 3.1.1 libraries speak it: one connection, QoS 1
/// publishes, and what the broker answered to each. The project's own client speaks MQTT 5
/// only, and 3.1.1 has no negative PUBACK: a broker that cannot take a publish either
/// acknowledges it or closes the connection. Its blocking socket runs on a thread of its own.
public final class MQTT311Client: @unchecked Sendable {
    /// What the broker did with a publish.
    public enum Answer: Equatable, Sendable {
        case acknowledged
        case closed
        case nothing
    }

    private let descriptor: Int32
    private var nextPacketID: UInt16 = 1

    /// Connects (clean session) and waits for the CONNACK; throws unless it accepts.
    public init(port: Int, clientID: String, username: String, password: String) async throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            Glibc.close(descriptor)
            throw TestEnvironmentError("no connection to 127.0.0.1:\(port): errno \(errno)")
        }
        // Protocol "MQTT" level 4; flags: user name, password, clean session; keep-alive 30 s.
        var body: [UInt8] = Self.string("MQTT") + [4, 0b1100_0010, 0, 30]
        body += Self.string(clientID) + Self.string(username) + Self.string(password)
        let packet = Self.packet(0x10, body)
        let reply = try await onThread { [self] in
            send(packet)
            return receive(4).bytes
        }
        guard reply.count == 4, reply[0] == 0x20, reply[3] == 0 else {
            Glibc.close(descriptor)
            throw TestEnvironmentError("CONNECT refused: \(reply)")
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Publishes at QoS 1 and says what the broker answered within three seconds.
    public func publish(topic: String, payload: String) async throws -> Answer {
        let id = nextPacketID
        nextPacketID &+= 1
        let body = Self.string(topic) + [UInt8(id >> 8), UInt8(id & 0xff)] + Array(payload.utf8)
        let packet = Self.packet(0x32, body)
        return try await onThread { [self] in
            send(packet)
            let reply = receive(4)
            if reply.bytes.isEmpty { return reply.timedOut ? .nothing : .closed }
            return reply.bytes == [0x40, 2, UInt8(id >> 8), UInt8(id & 0xff)] ? .acknowledged : .nothing
        }
    }

    private func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Up to `count` bytes: fewer when the connection closed, or when nothing more came within
    /// the socket's timeout.
    private func receive(_ count: Int) -> (bytes: [UInt8], timedOut: Bool) {
        var buffer = [UInt8](repeating: 0, count: count)
        var read = 0
        while read < count {
            let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + read, count - read, 0) }
            if got <= 0 { return (Array(buffer[..<read]), got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) }
            read += got
        }
        return (buffer, false)
    }

    private func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
    }

    private static func packet(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        var length = body.count
        var encoded: [UInt8] = []
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            encoded.append(byte)
        } while length > 0
        return [type] + encoded + body
    }
}
