import Foundation
import ParleyTestSupport
import Synchronization

/// `parley serve` and `parley worker` running as processes against a set of services, with
/// a small REST client (`LiveStack+REST.swift`): what a mobile app and an operator see.
///
/// The one place the tests start and stop Parley's long-running processes: the stack may
/// start more (another worker after one is killed, a second serve), and ``stop()`` ends
/// every one still running.
struct LiveStack: Sendable {
    let parley: ParleyCommand
    /// Where every process's log is (`<name>.log`); removed by ``stop()``.
    let directory: String
    let serve: ParleyProcess?
    let worker: ParleyProcess?
    /// The REST client's server: the serve's cleartext listener (see ``through(_:)``).
    let base: String
    /// The worker's internal listener (health, metrics).
    let workerBase: String
    private let started: StartedProcesses

    /// Starts a `serve` and a `worker` (with `workerRoles`, or every role), or one of them,
    /// and waits until each reports its listener.
    static func start(
        _ parley: ParleyCommand, serve: Bool = true, worker: Bool = true, workerRoles: [String] = []
    ) async throws -> LiveStack {
        let directory = TestScratch.path("parley-stack")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let empty = LiveStack(parley: parley, directory: directory)
        do {
            async let serveProcess = serve ? empty.startServe("serve") : nil
            async let workerProcess = worker ? empty.startWorker("worker", roles: workerRoles) : nil
            return LiveStack(empty, serve: try await serveProcess, worker: try await workerProcess)
        } catch {
            await empty.stop()
            throw error
        }
    }

    private init(parley: ParleyCommand, directory: String) {
        (self.parley, self.directory, started) = (parley, directory, StartedProcesses())
        (serve, worker, base, workerBase) = (nil, nil, "", "")
    }

    private init(_ stack: LiveStack, serve: ParleyProcess?, worker: ParleyProcess?, base: String? = nil) {
        (parley, directory, started) = (stack.parley, stack.directory, stack.started)
        (self.serve, self.worker) = (serve, worker)
        self.base = base ?? serve?.url ?? ""
        workerBase = worker?.url ?? ""
    }

    /// Starts another `parley serve`, logging to `<name>.log`, with `environment` over the stack's.
    func startServe(_ name: String, environment: [String: String] = [:]) async throws -> ParleyProcess {
        try await start(name, ["serve"], environment: environment, listener: "cleartext")
    }

    /// Starts another `parley worker` (with `roles`, or every role), logging to `<name>.log`,
    /// with `environment` over the stack's.
    func startWorker(_ name: String, roles: [String] = [], environment: [String: String] = [:]) async throws
        -> ParleyProcess
    {
        let arguments = ["worker"] + (roles.isEmpty ? [] : ["--roles"] + roles)
        return try await start(name, arguments, environment: environment, listener: "internal")
    }

    private func start(_ name: String, _ arguments: [String], environment: [String: String], listener: String)
        async throws -> ParleyProcess
    {
        let process = try await ParleyProcess.start(
            name, arguments, environment: parley.environment.merging(environment) { $1 }, directory: directory,
            listener: listener)
        started.add(process)
        return process
    }

    /// The same stack with its REST client talking to `serve`, one of the stack's serves.
    func through(_ serve: ParleyProcess) -> LiveStack {
        LiveStack(self, serve: self.serve, worker: worker, base: serve.url)
    }

    /// Every process the stack started, in the order it did.
    var processes: [ParleyProcess] { started.all }

    /// What the process logging to `name` (`serve.log`, `worker.log`) has logged so far.
    func log(_ name: String) -> String {
        (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? ""
    }

    /// Stops every process still running (SIGTERM), waits for them and removes the logs;
    /// returns how each process ended, by name (a killed one: 128 + SIGKILL).
    @discardableResult
    func stop() async -> [String: Int32] {
        let statuses = await withTaskGroup(of: (String, Int32).self) { group in
            for process in processes { group.addTask { (process.name, await process.stop()) } }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        try? FileManager.default.removeItem(atPath: directory)
        return statuses
    }

    /// Runs `body`, then ``stop()``s the stack, whether `body` returned or threw.
    func stopping<Result>(after body: () async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            await stop()
            throw error
        }
        await stop()
        return result
    }
}

/// The processes a stack and its copies started.
private final class StartedProcesses: Sendable {
    private let list = Mutex<[ParleyProcess]>([])
    func add(_ process: ParleyProcess) { list.withLock { $0.append(process) } }
    var all: [ParleyProcess] { list.withLock { $0 } }
}
