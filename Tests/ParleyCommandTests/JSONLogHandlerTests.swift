import Foundation
import Logging
import ParleyTestSupport
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
        let object = try JSONDecoder().decode(JSONLogLine.self, from: Data(line.utf8))
        #expect(object.level == "warning")
        #expect(object.label == "parley.test")
        #expect(object.message == "a \"quoted\"\nline ✓")
        #expect(object.requestId == "abc-1")
        let metadata = try #require(object.metadata)
        #expect(metadata["request_id"] == nil)
        #expect(metadata["room"] == .text("12"))
        #expect(metadata["error"] == .text("42"))
        #expect(metadata["list"] == .list([.text("a"), .text("b")]))
        #expect(metadata["nested"] == .object(["key": .text("value")]))
        #expect(object.time.count == 24 && object.time.hasSuffix("Z"), "\(object.time)")
    }

    @Test func theFormatIsTextOrJSONAndNothingElse() throws {
        #expect(try Settings(environment: [:]).logsJSON() == false)
        #expect(try Settings(environment: ["PARLEY_LOG_FORMAT": "json"]).logsJSON())
        #expect(throws: (any Error).self) { try Settings(environment: ["PARLEY_LOG_FORMAT": "xml"]).logsJSON() }
    }
}
