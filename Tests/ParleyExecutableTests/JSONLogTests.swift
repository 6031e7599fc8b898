import Foundation
import ParleyTestSupport
import Testing

/// `PARLEY_LOG_FORMAT=json`: every line `parley serve` writes is one JSON object, and a
/// failed request's line carries the request's id.
struct JSONLogTests {
    @Test func serveWritesOneJSONObjectALineWithTheRequestID() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        // Nothing listens there: a login, which asks Redis first, fails with 503 and is logged.
        let closedPort = try await PluginBroker.freePort()
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_LOG_FORMAT": "json", "PARLEY_REDIS_PORT": String(closedPort),
            ]) { $1 })
        let log = TestScratch.path("serve-json", suffix: ".log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let serve = try parley.start("serve", log: log)
        do {
            try await exercise(log: log)
        } catch {
            _ = await Subprocess.terminate(serve)
            throw error
        }
        #expect(await Subprocess.terminate(serve) == 0)
        // The lines of the shutdown too.
        #expect(try Self.lines(log).count > 2)
    }

    private func exercise(log: String) async throws {
        var port: String?
        for _ in 0..<300 where port == nil {
            port = try Self.lines(log).lazy.compactMap { line -> String? in
                guard line.message == "listening", line.metadata?["listener"] == .text("cleartext") else { return nil }
                return line.metadata?["port"]?.text
            }.first
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let written = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let cleartext = try #require(port, "no listening line: \(written)")
        let answer = try await Subprocess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "-H", "X-Request-Id: json-log-test",
                "-H", "Content-Type: application/json", "--data-binary",
                #"{"email":"nobody@example.com","password":"whatever it is"}"#,
                "http://127.0.0.1:\(cleartext)/v1/auth/login",
            ])
        #expect(answer.standardOutput == "503")
        var failed: JSONLogLine?
        for _ in 0..<100 where failed == nil {
            failed = try Self.lines(log).first { $0.requestId == "json-log-test" }
            if failed == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let line = try #require(failed, "no line with the request's id")
        #expect(line.level == "error")
        #expect(line.message == "request failed")
        #expect(line.label.isEmpty == false)
        #expect(line.time.hasSuffix("Z") && line.time.count == 24, "\(line.time)")
    }

    /// Every line of the log; a line that is not one fails the test.
    static func lines(_ log: String) throws -> [JSONLogLine] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard let object = try? JSONDecoder().decode(JSONLogLine.self, from: Data(line.utf8)) else {
                throw TestEnvironmentError("not a JSON log line: \(line)")
            }
            return object
        }
    }
}
