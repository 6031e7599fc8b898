import Foundation
import Logging
import Synchronization
import Testing

@testable import parley

/// The JSON log line: its fields, the request id lifted out, nested metadata kept, text escaped.
struct JSONLogHandlerTests {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func aLineIsOneJSONObjectWithTheRequestIDAndTheMetadata() throws {
        let lines = Lines()
        var handler = JSONLogHandler(label: "parley.test") { lines.add($0) }
        handler.logLevel = .info
        handler[metadataKey: "request_id"] = "abc-1"
        var logger = Logger(label: "parley.test") { _ in handler }
        logger[metadataKey: "room"] = "12"
        logger.debug("below the level")
        logger.warning(
            "a \"quoted\"\nline ✓",
            metadata: ["error": .stringConvertible(42), "list": ["a", "b"], "nested": ["key": "value"]])
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false, "one line: \(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
        #expect(object["label"] as? String == "parley.test")
        #expect(object["message"] as? String == "a \"quoted\"\nline ✓")
        #expect(object["requestId"] as? String == "abc-1")
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["request_id"] == nil)
        #expect(metadata["room"] as? String == "12")
        #expect(metadata["error"] as? String == "42")
        #expect(metadata["list"] as? [String] == ["a", "b"])
        #expect((metadata["nested"] as? [String: String]) == ["key": "value"])
        let time = try #require(object["time"] as? String)
        #expect(time.count == 24 && time.hasSuffix("Z"), "\(time)")
    }

    @Test func theFormatIsTextOrJSONAndNothingElse() throws {
        #expect(try Settings(environment: [:]).logsJSON() == false)
        #expect(try Settings(environment: ["PARLEY_LOG_FORMAT": "json"]).logsJSON())
        #expect(throws: (any Error).self) { try Settings(environment: ["PARLEY_LOG_FORMAT": "xml"]).logsJSON() }
    }
}
