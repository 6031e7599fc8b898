import Foundation
import ParleyCore
import ParleyTestSupport

@testable import ParleyAPI

#if canImport(Glibc)
    import Glibc
#endif

/// `parley serve` and `parley worker` running as processes against a set of services, with
/// a small REST client: what a mobile app and an operator see.
struct LiveStack {
    let serve: Int32
    let worker: Int32
    let base: String
    let workerBase: String
    let directory: String

    /// Starts both processes and waits until each reports its listener.
    static func start(_ parley: ParleyCommand, workerRoles: [String] = []) async throws -> LiveStack {
        let directory = TestScratch.path("parley-stack")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let serve = try Subprocess.start(
            try ParleyCommand.binary, ["serve"], environment: parley.environment,
            outputFile: "\(directory)/serve.log")
        let worker = try Subprocess.start(
            try ParleyCommand.binary, ["worker"] + (workerRoles.isEmpty ? [] : ["--roles"] + workerRoles),
            environment: parley.environment, outputFile: "\(directory)/worker.log")
        let stack = LiveStack(serve: serve, worker: worker, base: "", workerBase: "", directory: directory)
        do {
            let servePort = try await stack.port(in: "serve.log", listener: "cleartext")
            let workerPort = try await stack.port(in: "worker.log", listener: "internal")
            return LiveStack(
                serve: serve, worker: worker, base: "http://127.0.0.1:\(servePort)",
                workerBase: "http://127.0.0.1:\(workerPort)", directory: directory)
        } catch {
            await stack.stop()
            throw error
        }
    }

    private func port(in log: String, listener: String) async throws -> Int {
        try await Self.port(inFile: "\(directory)/\(log)", listener: listener)
    }

    /// The port a process logged for `listener` (`cleartext`, `internal`), once it has.
    static func port(inFile path: String, listener: String) async throws -> Int {
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

    func log(_ name: String) -> String {
        (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? ""
    }

    /// Stops both processes (SIGTERM) and waits for them.
    func stop() async {
        async let serveEnded = Subprocess.terminate(serve)
        async let workerEnded = Subprocess.terminate(worker)
        _ = await (serveEnded, workerEnded)
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Response {
        let status: Int
        /// The body as sent.
        let text: String

        /// The body as the API's own type; one that is not throws.
        func decoded<Answer: Decodable>(_ type: Answer.Type) throws -> Answer {
            try JSONCoding.decoder.decode(Answer.self, from: Data(text.utf8))
        }
    }

    /// One request through curl, with a JSON `body`; status 0 when no answer came within `timeout`.
    func request(
        _ method: String, _ path: String, body: String? = nil, token: String? = nil, on base: String? = nil,
        headers: [String] = [], timeout: Int = 10
    ) async throws -> Response {
        var arguments = ["-s", "--max-time", String(timeout), "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try await Subprocess.run("/usr/bin/curl", arguments + [(base ?? self.base) + path])
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        return Response(status: status, text: lines.dropLast().joined(separator: "\n"))
    }

    /// Registers a user and logs in; returns the user's id, access token and MQTT login.
    func signUp(_ name: String) async throws -> (id: Int, token: String, mqtt: LoginResponse.MQTT) {
        let email = "\(name)-\(UUID().uuidString.prefix(8))@example.com"
        let registered = try await request(
            "POST", "/v1/auth/register",
            body: #"{"email":"\#(email)","password":"correct horse battery","firstName":"\#(name)","lastName":"Test"}"#)
        let login = try await request(
            "POST", "/v1/auth/login", body: #"{"email":"\#(email)","password":"correct horse battery"}"#)
        guard let user = try? registered.decoded(UserResponse.self), let answer = try? login.decoded(LoginResponse.self)
        else {
            throw TestEnvironmentError("sign-up failed: \(registered.text) \(login.text)")
        }
        return (Int(user.id), answer.accessToken, answer.mqtt)
    }
}
