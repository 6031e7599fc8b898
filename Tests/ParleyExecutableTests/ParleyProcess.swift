import Foundation
import ParleyTestSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One `parley serve` or `parley worker` of a ``LiveStack``, with its log and its listener.
///
/// It ends once, by ``stop()`` or ``kill()``: later calls return the same status and signal
/// nothing, so a pid the system has reused is never signalled.
final class ParleyProcess: Sendable {
    let name: String
    let pid: Int32
    let logPath: String
    /// `http://127.0.0.1:<port>` of the listener the process was waited for.
    let url: String
    private let ending = Mutex<Task<Int32, Never>?>(nil)

    /// Starts `parley <arguments>` logging to `<directory>/<name>.log` and waits until it logs
    /// `listener` (`cleartext`, `internal`); a process that never does is killed.
    static func start(
        _ name: String, _ arguments: [String], environment: [String: String], directory: String, listener: String
    ) async throws -> ParleyProcess {
        let logPath = "\(directory)/\(name).log"
        let pid = try Subprocess.start(
            try ParleyCommand.binary, arguments, environment: environment, outputFile: logPath)
        do {
            let port = try await port(inFile: logPath, listener: listener)
            return ParleyProcess(name: name, pid: pid, logPath: logPath, url: "http://127.0.0.1:\(port)")
        } catch {
            await ParleyProcess(name: name, pid: pid, logPath: logPath, url: "").stop()
            throw error
        }
    }

    private init(name: String, pid: Int32, logPath: String, url: String) {
        (self.name, self.pid, self.logPath, self.url) = (name, pid, logPath, url)
    }

    /// `http://127.0.0.1:<port>` of another of its listeners (`internal` of a serve), once logged.
    func url(of listener: String) async throws -> String {
        "http://127.0.0.1:\(try await Self.port(inFile: logPath, listener: listener))"
    }

    /// The port a process logged for `listener`, once it has.
    private static func port(inFile path: String, listener: String) async throws -> Int {
        let pattern = try Regex("listener=\(listener) port=(\\d+)")
        func text() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        for _ in 0..<300 {
            if let match = text().firstMatch(of: pattern), let port = Int(match.output[1].substring ?? "") {
                return port
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestEnvironmentError("no \(listener) listener in \(path): \(text())")
    }

    /// What the process has logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Stops it (SIGTERM, then SIGKILL after a minute) and returns its exit status.
    @discardableResult
    func stop() async -> Int32 {
        await end { await Subprocess.terminate($0) }
    }

    /// Kills it (SIGKILL), as a crash would, and returns its exit status once it has ended.
    @discardableResult
    func kill() async -> Int32 {
        await end { pid in
            Glibc.kill(pid, SIGKILL)
            return await Subprocess.exitStatus(of: pid)
        }
    }

    /// Freezes it (SIGSTOP) where it is, until ``resume()``.
    func suspend() { signal(SIGSTOP) }

    func resume() { signal(SIGCONT) }

    private func signal(_ number: Int32) {
        let running = ending.withLock { $0 == nil }
        if running { Glibc.kill(pid, number) }
    }

    /// Runs `ender` the first time; every call returns its status.
    private func end(_ ender: @escaping @Sendable (Int32) async -> Int32) async -> Int32 {
        let pid = self.pid
        let task = ending.withLock { task in
            if let task { return task }
            let started = Task { await ender(pid) }
            task = started
            return started
        }
        return await task.value
    }
}
