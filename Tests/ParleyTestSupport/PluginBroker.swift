import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A mosquitto with Parley's plugin, on a free loopback port, for one test.
public final class PluginBroker: Sendable {
    public let port: Int
    let pid: Int32
    let directory: String
    /// The plugin's lines of the configuration, for a restart.
    let options: String
    let valgrind: Bool

    /// The plugin built next to the test binary.
    public static var pluginPath: String {
        get throws {
            let binary = try TestEnvironment.binary
            return URL(fileURLWithPath: binary).deletingLastPathComponent()
                .appendingPathComponent("libParleyMosquittoPlugin.so").path
        }
    }

    /// - Parameters:
    ///   - valgrind: run the broker under valgrind's leak checker.
    ///   - lookupTimeout: the plugin's `timeout_ms` for an ACL lookup.
    ///   - stampKeyBase64: the key the plugin signs its chat-in sender stamps with.
    ///   - extraOptions: more `plugin_opt_...` lines.
    public convenience init(
        tokenKeyBase64: String, serverUsername: String, serverPassword: String, aclURL: String, valgrind: Bool = false,
        lookupTimeout: Duration = .seconds(5), stampKeyBase64: String = PluginBroker.stampKeyBase64,
        extraOptions: String = ""
    ) async throws {
        let directory = TestScratch.path("broker")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        // mosquitto loads its plugin after dropping to user `mosquitto`, who cannot read a build
        // directory inside a private checkout (a clone into `mktemp -d` is mode 0700): the
        // broker gets its own readable copy.
        let plugin = "\(directory)/libParleyMosquittoPlugin.so"
        try FileManager.default.copyItem(atPath: try Self.pluginPath, toPath: plugin)
        chmod(plugin, 0o755)
        // A lookup that times out is denied (the plugin fails closed), and these tests assert
        // answers, not latency: the product's 500 ms is a budget for a server of its own, while
        // here the whole suite shares two cores with stress-ng or a build, and three tests once
        // got 0x87 from lookups past 500 ms while the 50 MiB upload test ran (no thread of the
        // process was held: SchedulingWatchdogTests passed). Under valgrind the plugin also runs
        // many times slower. The plugin's denial on a timeout has a test of its own.
        let options = """
            plugin \(plugin)
            plugin_opt_token_key \(tokenKeyBase64)
            plugin_opt_server_username \(serverUsername)
            plugin_opt_server_password \(serverPassword)
            plugin_opt_acl_url \(aclURL)
            plugin_opt_timeout_ms \(Int(lookupTimeout / .milliseconds(1)))
            plugin_opt_stamp_key \(stampKeyBase64)
            \(extraOptions)
            """
        try await self.init(directory: directory, options: options, valgrind: valgrind)
    }

    /// A new broker process with this one's configuration, after this one stopped (what a
    /// broker restart does to the plugin's state; on a new port).
    /// - Parameters:
    ///   - aclURL: where the new one asks instead; `lookupTimeout`: its `timeout_ms` instead.
    public func restarted(aclURL: String? = nil, lookupTimeout: Duration? = nil) async throws -> PluginBroker {
        await stop()
        let milliseconds = lookupTimeout.map { "\(Int($0 / .milliseconds(1)))" }
        let replacements = [("plugin_opt_acl_url", aclURL), ("plugin_opt_timeout_ms", milliseconds)]
        let lines = options.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            for case let (option, value?) in replacements where line.hasPrefix(option + " ") {
                return "\(option) \(value)"
            }
            return String(line)
        }
        return try await PluginBroker(directory: directory, options: lines.joined(separator: "\n"), valgrind: valgrind)
    }

    private init(directory: String, options: String, valgrind: Bool) async throws {
        self.directory = directory
        self.options = options
        self.valgrind = valgrind
        // mosquitto cannot listen on port 0 and report it, so a port taken between the check
        // and mosquitto's bind (by anything on the machine) means a new port and a new start.
        var attempt = 0
        while true {
            attempt += 1
            let port = try await Self.freePort()
            let pid = try Self.start(port: port, in: directory, options: options, valgrind: valgrind)
            switch await Self.waitUntilListening(pid: pid, port: port, valgrind: valgrind) {
            case .listening:
                self.port = port
                self.pid = pid
                return
            case .exited where attempt < 5 && Self.log(in: directory).contains("Address already in use"):
                continue
            case .exited, .timedOut:
                kill(pid, SIGKILL)
                _ = await Subprocess.exitStatus(of: pid)
                throw TestEnvironmentError("mosquitto with the plugin did not start: \(Self.log(in: directory))")
            }
        }
    }

    private enum Start { case listening, exited, timedOut }

    private static func start(port: Int, in directory: String, options: String, valgrind: Bool) throws -> Int32 {
        // Sessions are kept across a restart only when the options ask for it.
        let persistence = options.contains("persistence true") ? "" : "persistence false"
        let configuration = """
            per_listener_settings false
            allow_anonymous false
            \(persistence)
            listener \(port) 127.0.0.1
            \(options)
            log_dest stdout
            log_type error
            log_type warning
            log_type notice

            """
        try configuration.write(toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
        chmod("\(directory)/mosquitto.conf", 0o644)
        try? FileManager.default.removeItem(atPath: "\(directory)/broker.log")
        let command =
            valgrind
            ? ("/usr/bin/valgrind", ["--leak-check=full", "--show-leak-kinds=definite", "/usr/sbin/mosquitto", "-c"])
            : ("/usr/sbin/mosquitto", ["-c"])
        return try Subprocess.start(
            command.0, command.1 + ["\(directory)/mosquitto.conf"], outputFile: "\(directory)/broker.log")
    }

    /// Listening means this broker's process still runs and holds the listening socket (or,
    /// where `/proc` does not show it, the port answers); a port taken by someone else makes
    /// mosquitto exit, which the next start sees. mosquitto's log to a file is buffered.
    private static func waitUntilListening(pid: Int32, port: Int, valgrind: Bool) async -> Start {
        for _ in 0..<(valgrind ? 300 : 100) {
            if Subprocess.exitStatusIfEnded(pid) != nil { return .exited }
            // Its own socket, when /proc shows it; else a port that answers while it runs.
            if process(pid, listensOn: port) || accepts(port: port) { return .listening }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return .timedOut
    }

    /// Whether `pid` has a descriptor on the socket listening on 127.0.0.1:`port` (found by
    /// its inode in `/proc/net/tcp`).
    static func process(_ pid: Int32, listensOn port: Int) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let address = String(format: "0100007F:%04X", port)
        let inodes = table.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[1] == address, fields[3] == "0A" else { return nil }
            return "socket:[\(fields[9])]"
        }
        guard !inodes.isEmpty else { return false }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return descriptors.contains { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
            return target.map(inodes.contains) ?? false
        }
    }

    private static func log(in directory: String) -> String {
        (try? String(contentsOfFile: "\(directory)/broker.log", encoding: .utf8)) ?? ""
    }

    public var log: String { Self.log(in: directory) }

    /// Stops the broker (SIGTERM) and returns its exit status.
    @discardableResult
    public func stop() async -> Int32 {
        await Subprocess.terminate(pid)
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

    /// A free port below the ephemeral range, claimed for this process by
    /// `deploy/local/services free-port`, which keeps the machine's port claims for every stack,
    /// script and test: no other takes it while its server is down a moment (a broker restarted).
    public static func freePort() async throws -> Int {
        let work = ProcessInfo.processInfo.environment["PARLEY_TEST_WORK_DIR"] ?? NSTemporaryDirectory()
        let output = try await TestServices.runScript(["free-port", work, "--for-pid", String(getpid())])
            .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(output) else { throw TestEnvironmentError("free-port answered \(output)") }
        return port
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
