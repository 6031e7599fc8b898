import Foundation
import ParleyCore
import ParleyRuntime
import Testing

@testable import parley_load

/// Round trips are counted as the data segments each server receives on its port.
struct ServerRequestsTests {
    @Test func segmentsAreSummedPerServerPortFromSocketStatistics() {
        let text = """
            0      0      127.0.0.1:5432 127.0.0.1:40001
            \t cubic wscale:7,7 rto:204 bytes_received:900 segs_in:12 data_segs_in:10 data_segs_out:9
            0      0      127.0.0.1:5432 127.0.0.1:40002
            \t cubic segs_in:6 data_segs_in:5 data_segs_out:5
            0      0      127.0.0.1:40001 127.0.0.1:5432
            \t cubic segs_in:11 data_segs_in:9 data_segs_out:10
            0      0      [::1]:6379 [::1]:50000
            \t cubic data_segs_in:7
            """
        let counts = ServerRequests.segmentsIn(
            text, ports: [("postgres", 5432), ("redis", 6379), ("mosquitto", 1883)])
        // The client's end of a connection (local port 40001) is not the server's.
        #expect(
            counts == [
                "postgres": ["127.0.0.1:40001": 10, "127.0.0.1:40002": 5], "redis": ["[::1]:50000": 7],
                "mosquitto": [:],
            ])
        #expect(ServerRequests.received(from: [:], to: counts) == ["postgres": 15, "redis": 7, "mosquitto": 0])
    }

    @Test func aConnectionClosedBetweenSamplesTakesOnlyItsOwnCountAway() {
        let start: ServerRequests.Sample = ["postgres": ["a:1": 10, "b:2": 5, "c:3": 40]]
        // a: 4 more; b: closed; c: its port reused by a new connection with 2; d: opened with 3.
        let end: ServerRequests.Sample = ["postgres": ["a:1": 14, "c:3": 2, "d:4": 3]]
        #expect(ServerRequests.received(from: start, to: end) == ["postgres": 9])
        // One peer address may talk to two servers (an ephemeral port is reused per destination).
        let both: ServerRequests.Sample = ["postgres": ["a:1": 10], "redis": ["a:1": 100]]
        let later: ServerRequests.Sample = ["postgres": ["a:1": 12], "redis": ["a:1": 101]]
        #expect(ServerRequests.received(from: both, to: later) == ["postgres": 2, "redis": 1])
    }

    @Test func aRealConnectionsRequestsAreCounted() async throws {
        // Sockets are blocking calls: they run on a thread of their own, as in the product.
        let connection = await BlockingCall.run("test-sockets") { LoopbackPair() }
        defer { connection.close() }
        let counter = try ServerRequests(count: ["server=\(connection.port)"])
        let before = await counter.sample()
        await BlockingCall.run("test-sockets") { connection.exchange(5) }
        let after = await counter.sample()
        #expect(ServerRequests.received(from: before, to: after) == ["server": 5])
    }
}

/// A server socket on a free loopback port and one connection to it.
private struct LoopbackPair: Sendable {
    let port: Int
    let descriptors: [Int32]

    init() {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, length) }
        }
        listen(server, 1)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server, $0, &length) }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        descriptors = [server, client, accept(server, nil, nil)]
    }

    /// The client sends `count` requests, each read by the server before the next.
    func exchange(_ count: Int) {
        var buffer = [UInt8](repeating: 0, count: 16)
        for _ in 0..<count {
            _ = send(descriptors[1], "ping", 4, 0)
            _ = recv(descriptors[2], &buffer, buffer.count, 0)
        }
    }

    func close() { for descriptor in descriptors { _ = Glibc.close(descriptor) } }
}
