import Logging
import Synchronization
import Testing

@testable import parley

/// The text line is swift-log's stream handler's, whatever metadata the logger, the provider
/// and the call give, with the same precedence.
struct TextLogHandlerTests {
    final class Lines: TextOutputStream, Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ string: String) { lines.withLock { $0.append(string) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// The line without its leading time (a second may pass between two lines).
    func untimed(_ line: String) -> Substring { line.drop { $0 != " " } }

    @Test func aLineIsTheStreamHandlersWithTheMetadataMergedWhenWritten() {
        let provider = Logger.MetadataProvider { ["trace": "t-1", "room": "from-provider"] }
        let ours = Lines()
        let theirs = Lines()
        var text = TextLogHandler(
            label: "parley.test", lines: StreamLogHandler(label: "parley.test", stream: ours, metadataProvider: nil))
        text.metadataProvider = provider
        let loggers = [
            Logger(label: "parley.test") { _ in text },
            Logger(label: "parley.test") { StreamLogHandler(label: $0, stream: theirs, metadataProvider: provider) },
        ]
        for var logger in loggers {
            logger[metadataKey: "request_id"] = "abc-1"
            logger[metadataKey: "room"] = "12"
            logger.debug("below the level")
            logger.info("plain")
            logger.warning("with its own", metadata: ["room": "13", "error": .stringConvertible(42)])
        }
        #expect(ours.all.count == 2)
        #expect(ours.all.map(untimed) == theirs.all.map(untimed))
        #expect(ours.all.first?.contains(" info parley.test: request_id=abc-1 room=from-provider trace=t-1 [") == true)
        #expect(ours.all.last?.contains(" warning parley.test: error=42 request_id=abc-1 room=13 trace=t-1 [") == true)
    }
}
