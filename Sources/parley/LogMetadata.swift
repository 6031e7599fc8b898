import Logging

extension LogHandler {
    /// The metadata a line carries, with swift-log's precedence: the logger's own, then the
    /// provider's, then the call's. One rule for both of Parley's handlers.
    func lineMetadata(_ explicit: Logger.Metadata?) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit { merged.merge(explicit) { $1 } }
        return merged
    }
}
