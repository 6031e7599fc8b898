import Foundation
import Logging
import ParleyCore

/// Deletes files no message carries any longer, with their content and thumbnails — unless
/// something holds them (an open report, an avatar, a data export).
public struct FileEraser: Sendable {
    let files: any FileRepository
    let store: any BlobStore
    let logger: Logger

    public init(files: any FileRepository, store: any BlobStore, logger: Logger) {
        self.files = files
        self.store = store
        self.logger = logger
    }

    /// Returns how many of `ids` were deleted.
    @discardableResult
    public func erase(_ ids: [Int64]) async throws -> Int {
        var removed = 0
        for id in ids {
            guard let file = try await files.deleteOrphan(id: id) else { continue }
            removed += 1
            for key in [file.storageKey, file.thumbnailSmallKey, file.thumbnailLargeKey].compactMap({ $0 }) {
                do {
                    try await store.delete(key: key)
                } catch {
                    // The row is gone: say which blob is left, and go on with the others.
                    logger.error("deleted file's blob left behind", metadata: ["key": "\(key)", "error": "\(error)"])
                }
            }
        }
        return removed
    }
}
