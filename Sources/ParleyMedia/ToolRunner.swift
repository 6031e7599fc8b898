import Foundation
import ParleyCore
import ParleyRuntime
import Synchronization

/// Runs a media tool as a child process under limits: address space and CPU time through
/// `prlimit`, wall time by killing it. A decoder that crashes or loops harms only its child.
public struct ToolRunner: Sendable {
    /// Address-space limit; the tools run single-threaded well inside 1 GiB.
    public var memoryLimit: Int
    public var cpuSeconds: Int
    public var wallTime: Duration

    public init(memoryLimit: Int = 1 << 30, cpuSeconds: Int = 60, wallTime: Duration = .seconds(90)) {
        self.memoryLimit = memoryLimit
        self.cpuSeconds = cpuSeconds
        self.wallTime = wallTime
    }

    public struct Failure: Error, CustomStringConvertible {
        public let tool: String
        public let status: Int32
        public let output: String
        public var description: String { "\(tool) failed (status \(status)): \(output.prefix(300))" }
    }

    /// Runs `tool` with `arguments`; returns its standard output (at most 1 MiB is kept).
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--as=\(memoryLimit)", "--cpu=\(cpuSeconds)", "--", tool] + arguments
        // Decoders of untrusted files get nothing of the worker's environment (its secrets).
        process.environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C", "HOME": NSTemporaryDirectory(),
            "VIPS_CONCURRENCY": "1",
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let child = ChildProcess()
        let finished = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { ended in
            child.exited()
            finished.continuation.yield(ended.terminationStatus)
        }
        try process.run()
        child.started(process.processIdentifier)
        // Pipes are drained on threads of their own while the child runs: a chatty tool
        // cannot block on a full pipe, and Swift concurrency's few threads are not held by
        // blocking reads (on Linux `DispatchQueue.global()` is that same pool).
        async let stdout = Self.drain(output.fileHandleForReading, keeping: 1 << 20)
        async let stderr = Self.drain(errors.fileHandleForReading, keeping: 4096)
        let watchdog = Task {
            try await Task.sleep(for: wallTime)
            child.kill()
        }
        let status = await withTaskCancellationHandler {
            var status: Int32 = -1
            for await code in finished.stream {
                status = code
                break
            }
            return status
        } onCancel: {
            child.kill()
        }
        watchdog.cancel()
        let text = String(decoding: await stdout, as: UTF8.self)
        let problems = String(decoding: await stderr, as: UTF8.self)
        guard status == 0, process.terminationReason == .exit else {
            throw Failure(tool: tool, status: status, output: problems)
        }
        return text
    }

    /// Reads a pipe to its end on a thread of its own, keeping at most `limit` bytes.
    static func drain(_ handle: FileHandle, keeping limit: Int) async -> Data {
        await BlockingCall.run("parley-tool") {
            var kept = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                if kept.count < limit { kept.append(chunk.prefix(limit - kept.count)) }
            }
            return kept
        }
    }
}

/// A child's pid, signalled only while it has not been reaped (a reaped pid may be reused).
final class ChildProcess: Sendable {
    private let state = Mutex<(pid: Int32, exited: Bool)>((0, false))

    func started(_ pid: Int32) { state.withLock { $0.pid = pid } }
    func exited() { state.withLock { $0.exited = true } }

    func kill() {
        state.withLock { child in
            if child.pid > 0 && !child.exited { _ = Glibc.kill(child.pid, SIGKILL) }
        }
    }
}
