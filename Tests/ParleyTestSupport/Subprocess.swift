import Foundation
import ParleyCore
import ParleyRuntime
import ParleyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to completion without blocking a Swift concurrency thread.
///
/// Built on `posix_spawn` and `waitpid` rather than Foundation's `Process`, which waits for
/// descriptors that daemons started by the program (PostgreSQL, Redis) inherit and keep open.
/// Output goes through temporary files for the same reason.
public enum Subprocess {
    public struct Result: Sendable {
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs a program and returns its status and output.
    ///
    /// - Parameter timeLimit: a program still running then is killed (status 137, and its
    ///   standard error says so): a test must end by itself even when a program it runs hangs.
    public static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
        timeLimit: Duration = .seconds(180)
    ) async throws -> Result {
        let files = try TemporaryFiles(input: input ?? "")
        let pid = try spawn(executable, arguments, environment: environment, files: files)
        let (status, overran) = await exitStatus(of: pid, killingAfter: timeLimit)
        var standardError = files.read(2)
        if overran { standardError += "\n\(executable) killed: still running after \(timeLimit)" }
        return Result(status: status, standardOutput: files.read(1), standardError: standardError)
    }

    /// Starts a program in the background; the caller signals and waits for it.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputFile: String
    ) throws -> Int32 {
        let files = try TemporaryFiles(input: "", output: outputFile)
        return try spawn(executable, arguments, environment: environment, files: files)
    }

    /// Waits for `pid` to end and returns its exit status (128 + signal when killed).
    ///
    /// `waitpid` blocks, so it runs on a thread of its own: on Swift concurrency's few
    /// threads (or `DispatchQueue.global()`, the same pool on Linux) a handful of waits
    /// stalled the whole test process for seconds.
    public static func exitStatus(of pid: Int32) async -> Int32 {
        await BlockingCall.run("parley-test-waitpid") { waitBlocking(for: pid) }
    }

    /// Waits for `pid` like ``exitStatus(of:)``, killing it (SIGKILL) if it still runs after
    /// `limit`; says whether it had to.
    public static func exitStatus(of pid: Int32, killingAfter limit: Duration) async -> (
        status: Int32, killed: Bool
    ) {
        let killer = Task { () -> Bool in
            guard (try? await Task.sleep(for: limit)) != nil else { return false }
            kill(pid, SIGKILL)
            return true
        }
        let status = await exitStatus(of: pid)
        killer.cancel()
        return (status, await killer.value)
    }

    /// Stops `pid` (SIGTERM) and returns its exit status; a program still running after
    /// `grace` is killed (status 137), so a test ends even when a program hangs in shutdown.
    @discardableResult
    public static func terminate(_ pid: Int32, grace: Duration = .seconds(60)) async -> Int32 {
        kill(pid, SIGTERM)
        let (status, killed) = await exitStatus(of: pid, killingAfter: grace)
        if killed { print("process \(pid) still ran \(grace) after SIGTERM and was killed") }
        return status
    }

    /// Runs `body` while the program `pid` runs, then stops it with ``terminate(_:grace:)``,
    /// whether `body` returned or threw.
    public static func stopping<Result>(_ pid: Int32, after body: () async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            await terminate(pid)
            throw error
        }
        await terminate(pid)
        return result
    }

    /// The exit status of `pid` if it has ended, without waiting; nil while it runs.
    public static func exitStatusIfEnded(_ pid: Int32) -> Int32? {
        var status: Int32 = 0
        var result: Int32
        repeat { result = waitpid(pid, &status, WNOHANG) } while result == -1 && errno == EINTR
        guard result == pid else { return nil }
        return decode(status)
    }

    private static func waitBlocking(for pid: Int32) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return decode(status)
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]?, files: TemporaryFiles
    ) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, files.paths[0], O_RDONLY, 0)
        // Appending: stdout and stderr may share one file.
        posix_spawn_file_actions_addopen(&actions, 1, files.paths[1], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, files.paths[2], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of the test process: a daemon the program starts would keep another
        // test's pipe open (its reader waiting for the end) for as long as the daemon runs.
        _ = addCloseFrom?(&actions, 3)

        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        // Swift's worker threads block signals; without resetting them the servers the
        // program starts would inherit a mask that blocks SIGTERM and never stop.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw TestEnvironmentError("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        return pid
    }

    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which its header declares
    /// only for C compiled with `_GNU_SOURCE`.
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }

    /// stdin, stdout and stderr of one run as files.
    final class TemporaryFiles: Sendable {
        let paths: [String]

        init(input: String, output: String? = nil) throws {
            let base = TestScratch.path("parley-subprocess")
            paths = [base + ".in", output ?? base + ".out", output ?? base + ".err"]
            try input.write(toFile: paths[0], atomically: true, encoding: .utf8)
        }

        func read(_ descriptor: Int) -> String {
            (try? String(contentsOfFile: paths[descriptor], encoding: .utf8)) ?? ""
        }

        deinit {
            for path in Set(paths) where path.contains("parley-subprocess-") {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
