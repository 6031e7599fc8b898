import Foundation
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `deploy/systemd/`: the units pass `systemd-analyze verify`, and the processes speak
/// systemd's notify protocol (`Type=notify`, `WatchdogSec`).
struct SystemdTests {
    static let units = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/systemd")

    @Test func theUnitsPassSystemdAnalyzeVerify() async throws {
        let directory = TestScratch.path("systemd-units")
        let dropIns = "\(directory)/parley-.service.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // verify checks that ExecStart's program exists: the built one stands in for /usr/bin/parley.
        let binary = try ParleyCommand.binary
        var checked: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.units.path)
        where name.hasSuffix(".service") {
            let text = try String(contentsOf: Self.units.appendingPathComponent(name), encoding: .utf8)
                .replacingOccurrences(of: "/usr/bin/parley", with: binary)
            // A template is verified as an instance of it, as systemd would start it.
            let unit = name.replacingOccurrences(of: "@.service", with: "@outbox-fanout.service")
            try text.write(toFile: "\(directory)/\(unit)", atomically: true, encoding: .utf8)
            checked.append("\(directory)/\(unit)")
        }
        #expect(checked.count == 3, "\(checked)")
        let hardening = try String(
            contentsOf: Self.units.appendingPathComponent("parley-.service.d/hardening.conf"), encoding: .utf8)
        try hardening.write(toFile: "\(dropIns)/hardening.conf", atomically: true, encoding: .utf8)
        // The directory on the unit path, so that the units' drop-in is read with them.
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_UNIT_PATH"] = "\(directory):"
        func verify(_ unit: String) async throws -> Subprocess.Result {
            try await Subprocess.run(
                "/usr/bin/systemd-analyze", ["verify", "--man=no", unit], environment: environment)
        }
        for unit in checked {
            let result = try await verify(unit)
            #expect(result.status == 0, "\(unit): \(result.standardError)")
            #expect(result.standardError.isEmpty, "\(unit): \(result.standardError)")
        }
        // The drop-in is read: a key it does not know is reported for every unit.
        try (hardening + "NotASystemdKey=1\n").write(
            toFile: "\(dropIns)/hardening.conf", atomically: true, encoding: .utf8)
        let broken = try await verify(checked[0])
        #expect(broken.standardError.contains("NotASystemdKey"), "the drop-in was not read: \(broken.standardError)")
    }

    @Test func aWorkerTellsSystemdItIsReadyAliveAndStopping() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let socketPath = TestScratch.path("notify", suffix: ".sock")
        let listener = try DatagramListener(path: socketPath)
        defer { try? FileManager.default.removeItem(atPath: socketPath) }
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "400000",
                // A Redis database of its own: its fan-out consumer must not take the jobs of
                // another test's worker on the shared Redis (WorkerRecoveryTests' vanished so).
                "PARLEY_REDIS_DATABASE": "9",
            ]) { $1 })
        let log = TestScratch.path("worker-notify", suffix: ".log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        // Roles as a systemd instance names them.
        let worker = try parley.start("worker", "--roles", "outbox-fanout", log: log)
        var received: [String] = []
        for _ in 0..<300 where received.filter({ $0 == "WATCHDOG=1" }).count < 3 {
            received += listener.drain()
            try await Task.sleep(for: .milliseconds(20))
        }
        let workerLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Pings may come before the listener is bound: systemd takes them any time.
        #expect(received.filter { $0 == "READY=1" }.count == 1, "\(received) \(workerLog)")
        #expect(received.filter { $0 == "WATCHDOG=1" }.count >= 3, "\(received)")
        #expect(workerLog.contains("roles=[\"fanout\", \"outbox\"]"), "\(workerLog)")
        #expect(await Subprocess.terminate(worker) == 0)
        received += listener.drain()
        #expect(received.contains("STOPPING=1"), "\(received)")
    }
}

/// A Unix datagram socket at a path, read without blocking: systemd's end of `NOTIFY_SOCKET`.
final class DatagramListener: Sendable {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard descriptor >= 0, bound == 0 else { throw TestEnvironmentError("cannot bind \(path): \(errno)") }
    }

    deinit { close(descriptor) }

    /// Every datagram waiting now.
    func drain() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return messages }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }
}
