import Foundation
import Glibc
import ParleyTestSupport
import Testing

/// A port chosen for one stack is claimed, so that no other stack, script or test takes it
/// while its server is down a moment (a test restarting its broker): `deploy/local/services`
/// keeps the claims, for a stack's directory or for a process (``PluginBroker/freePort()``).
struct PortClaimsTests {
    @Test func aClaimedPortGoesToNoOtherOwnerUntilItsOwnerIsGone() async throws {
        let script = try #require(ProcessInfo.processInfo.environment["PARLEY_TEST_SERVICES_SCRIPT"])
        let root = TestScratch.path("port-claims")
        let claims = "\(root)/claims"
        let stack = "\(root)/stack"
        try FileManager.default.createDirectory(atPath: stack, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let environment = ProcessInfo.processInfo.environment.merging(["PARLEY_PORT_CLAIMS_DIR": claims]) { $1 }
        func services(_ arguments: [String]) async throws -> Subprocess.Result {
            try await Subprocess.run(script, arguments, environment: environment)
        }
        func claim(_ port: Int, for pid: Int32) async throws -> Bool {
            try await services(["claim-port", root, String(port), "--for-pid", String(pid)]).status == 0
        }
        func owner(of port: Int) -> String? {
            (try? String(contentsOfFile: "\(claims)/\(port)/owner", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        var ports: [Int] = []
        for _ in 0..<3 {
            let result = try await services(["free-port", stack])
            #expect(result.status == 0, "\(result.standardError)")
            ports.append(try #require(Int(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))))
        }
        #expect(Set(ports).count == 3)
        #expect(ports.map(owner(of:)) == Array(repeating: stack, count: 3))

        let process = try Subprocess.start("/bin/sleep", ["60"], outputFile: "\(root)/sleep.log")
        // Held by a live stack: not a process's to take.
        #expect(try await !claim(ports[0], for: process))
        // The stack gone, its claims lapse.
        try FileManager.default.removeItem(atPath: stack)
        #expect(try await claim(ports[0], for: process))
        #expect(owner(of: ports[0]) == "pid:\(process)")
        // Held by a live process; free once it has ended.
        #expect(try await !claim(ports[0], for: getpid()), "a port claimed twice")
        _ = await Subprocess.terminate(process, grace: .seconds(5))
        #expect(try await claim(ports[0], for: getpid()))
        #expect(owner(of: ports[0]) == "pid:\(getpid())")
    }

    /// A broker is started only when it listens itself: its port answering is not enough, as
    /// another process may hold it (the answer came from another stack's broker before).
    @Test func aBrokerWhosePortIsTakenFailsToStartAndStartsOnceItIsFree() async throws {
        let services = try await TestServices.makePrivate()
        do {
            try await services.stop("mosquitto")
            let holder = try Self.listen(on: services.port("MQTT"))
            let refused: (any Error)?
            do {
                try await services.start("mosquitto")
                refused = nil
            } catch {
                refused = error
            }
            close(holder)
            #expect("\(refused.map { "\($0)" } ?? "started")".contains("Address already in use"))
            try await services.start("mosquitto")
        } catch {
            try? await services.shutdown()
            throw error
        }
        try await services.shutdown()
    }

    private static func listen(on port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard bound, Glibc.listen(socket, 8) == 0 else {
            close(socket)
            throw TestEnvironmentError("could not listen on \(port)")
        }
        return socket
    }
}
