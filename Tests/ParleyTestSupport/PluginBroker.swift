import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A mosquitto with Parley's plugin, on a free loopback port, for one test.
public final class PluginBroker: Sendable {
    public let port: Int
    let pid: Int32
    let directory: String

    /// The plugin built next to the test binary.
    public static var pluginPath: String {
        get throws {
            let binary = try TestEnvironment.binary
            return URL(fileURLWithPath: binary).deletingLastPathComponent()
                .appendingPathComponent("libParleyMosquittoPlugin.so").path
        }
    }

    /// - Parameter valgrind: run the broker under valgrind's leak checker.
    public init(
        tokenKeyBase64: String, serverUsername: String, serverPassword: String, aclURL: String, valgrind: Bool = false
    ) async throws {
        port = try Self.freePort()
        let work = ProcessInfo.processInfo.environment["PARLEY_TEST_WORK_DIR"] ?? NSTemporaryDirectory()
        directory = "\(work)/broker-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        // Under valgrind the plugin runs many times slower: a lookup must not time out into a denial.
        let configuration = """
            per_listener_settings false
            allow_anonymous false
            persistence false
            listener \(port) 127.0.0.1
            plugin \(try Self.pluginPath)
            plugin_opt_token_key \(tokenKeyBase64)
            plugin_opt_server_username \(serverUsername)
            plugin_opt_server_password \(serverPassword)
            plugin_opt_acl_url \(aclURL)
            plugin_opt_timeout_ms \(valgrind ? 5000 : 500)
            log_dest stdout
            log_type error
            log_type warning
            log_type notice

            """
        try configuration.write(toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
        chmod("\(directory)/mosquitto.conf", 0o644)
        let command =
            valgrind
            ? ("/usr/bin/valgrind", ["--leak-check=full", "--show-leak-kinds=definite", "/usr/sbin/mosquitto", "-c"])
            : ("/usr/sbin/mosquitto", ["-c"])
        pid = try Subprocess.start(
            command.0, command.1 + ["\(directory)/mosquitto.conf"], outputFile: "\(directory)/broker.log")
        for _ in 0..<(valgrind ? 300 : 100) where !Self.accepts(port: port) {
            try await Task.sleep(for: .milliseconds(50))
        }
        guard Self.accepts(port: port) else {
            throw TestEnvironmentError("mosquitto with the plugin did not start: \(log)")
        }
    }

    public var log: String { (try? String(contentsOfFile: "\(directory)/broker.log", encoding: .utf8)) ?? "" }

    /// Stops the broker (SIGTERM) and returns its exit status.
    @discardableResult
    public func stop() async -> Int32 {
        kill(pid, SIGTERM)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Subprocess.wait(for: self.pid)) }
        }
    }

    static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A free port below the kernel's ephemeral range: a broker restarted on it cannot find
    /// it taken as the source port of some outgoing connection.
    static func freePort() throws -> Int {
        let ephemeralStart =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { Int($0.split(whereSeparator: \.isWhitespace).first ?? "") } ?? 32768
        let candidates = 10000..<max(ephemeralStart, 10001)
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            if canBind(port) { return port }
        }
        throw TestEnvironmentError("no free port below \(ephemeralStart)")
    }

    private static func canBind(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Paths the test script exports.
public enum TestEnvironment {
    public static var binary: String {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["PARLEY_TEST_BINARY"] else {
                throw TestEnvironmentError("PARLEY_TEST_BINARY is not set: run the tests with deploy/local/test")
            }
            return path
        }
    }
}
