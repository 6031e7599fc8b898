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
        let closedPort = try PluginBroker.freePort()
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
                let metadata = line["metadata"] as? [String: Any]
                guard line["message"] as? String == "listening", metadata?["listener"] as? String == "cleartext"
                else { return nil }
                return metadata?["port"] as? String
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
        var failed: [String: Any]?
        for _ in 0..<100 where failed == nil {
            failed = try Self.lines(log).first { $0["requestId"] as? String == "json-log-test" }
            if failed == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let line = try #require(failed, "no line with the request's id")
        #expect(line["level"] as? String == "error")
        #expect(line["message"] as? String == "request failed")
        #expect((line["label"] as? String)?.isEmpty == false)
        let time = try #require(line["time"] as? String)
        #expect(time.hasSuffix("Z") && time.count == 24, "\(time)")
    }

    /// Every line of the log as a JSON object; a line that is not one fails the test.
    static func lines(_ log: String) throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["time"] is String, object["level"] is String, object["label"] is String,
                object["message"] is String
            else { throw TestEnvironmentError("not a JSON log line: \(line)") }
            return object
        }
    }
}
