import Foundation

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

    /// Runs `tool` with `arguments`; returns its standard output (at most 1 MiB).
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--as=\(memoryLimit)", "--cpu=\(cpuSeconds)", "--", tool] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["VIPS_CONCURRENCY"] = "1"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let finished = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished.continuation.yield($0.terminationStatus) }
        try process.run()
        // Drain both pipes while the child runs, so a chatty tool cannot block on a full pipe.
        let stdout = Task.detached { output.fileHandleForReading.readDataToEndOfFile().prefix(1 << 20) }
        let stderr = Task.detached { errors.fileHandleForReading.readDataToEndOfFile().prefix(4096) }
        let watchdog = Task {
            try await Task.sleep(for: wallTime)
            kill(process.processIdentifier, SIGKILL)
        }
        var status: Int32 = -1
        for await code in finished.stream {
            status = code
            break
        }
        watchdog.cancel()
        let text = String(decoding: await stdout.value, as: UTF8.self)
        guard status == 0, process.terminationReason == .exit else {
            throw Failure(tool: tool, status: status, output: String(decoding: await stderr.value, as: UTF8.self))
        }
        return text
    }
}
