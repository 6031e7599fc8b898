import Logging

/// Text lines as swift-log's `StreamLogHandler` writes them, its metadata merged when a line is
/// written instead of whenever it is set: the stream handler formats all its metadata again on
/// every change, and every request sets two entries (Hummingbird's request id and
/// `RequestIDMiddleware`'s), 2 % of `serve`'s CPU at 500 requests a second for lines that,
/// below the level, are never written.
struct TextLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    /// Writes the line; its own metadata stays empty, so setting it costs nothing.
    private let lines: StreamLogHandler

    init(label: String, lines: StreamLogHandler? = nil) {
        self.lines = lines ?? StreamLogHandler.standardError(label: label, metadataProvider: nil)
        metadataProvider = LoggingSystem.metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.metadata = lineMetadata(event.metadata)
        lines.log(event: event)
    }
}
