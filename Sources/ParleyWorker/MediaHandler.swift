import Foundation
import Logging
import ParleyCore

/// The `media` role: width, height, duration and thumbnails of an uploaded image or video.
///
/// The content is copied to a private work directory (the PostgreSQL store has no path to
/// hand a tool), the tools run in a subprocess under limits, and the thumbnails go back into
/// the blob store. Content the tools cannot read fails its job for good; the worker goes on.
public struct MediaHandler: Sendable {
    let files: any FileRepository
    let store: any BlobStore
    let processor: any MediaProcessor
    let workRoot: String
    let logger: Logger

    public init(
        files: any FileRepository, store: any BlobStore, processor: any MediaProcessor,
        workRoot: String = NSTemporaryDirectory(), logger: Logger
    ) {
        self.files = files
        self.store = store
        self.processor = processor
        self.workRoot = workRoot
        self.logger = logger
    }

    public func handle(_ payload: String) async throws {
        guard let job = try? JSONCoding.decoder.decode(MediaJob.self, from: Data(payload.utf8)) else {
            throw PermanentJobFailure(reason: "malformed media job")
        }
        // Deleted meanwhile (an orphan), or nothing a tool can read: nothing to do.
        guard let file = try await files.find(id: job.fileID),
            file.mimeType.hasPrefix("image/") || file.mimeType.hasPrefix("video/")
        else { return }
        let directory = "\(workRoot)/parley-media-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = "\(directory)/input"
        try await copy(key: file.storageKey, size: file.size, to: input)
        var details: MediaDetails
        do {
            details = try await processor.process(input: input, mimeType: file.mimeType, workDirectory: directory)
        } catch {
            logger.warning("media processing failed", metadata: ["file": "\(file.id)", "error": "\(error)"])
            throw PermanentJobFailure(reason: "the file could not be processed: \(error)")
        }
        details.thumbnailSmallKey = try await store(details.thumbnailSmallKey, as: .small, of: file)
        details.thumbnailLargeKey = try await store(details.thumbnailLargeKey, as: .large, of: file)
        try await files.setMedia(fileID: file.id, details)
    }

    private func copy(key: String, size: Int64, to path: String) async throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw PermanentJobFailure(reason: "cannot create a work file")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try await store.read(key: key, range: 0..<size) { chunk in try handle.write(contentsOf: chunk) }
    }

    /// Puts a thumbnail made at `path` into the store; returns its key.
    private func store(_ path: String?, as size: ThumbnailSize, of file: StoredFile) async throws -> String? {
        guard let path, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let key = BlobKey.thumbnail(of: file.storageKey, size)
        let writer = try await store.makeWriter(key: key)
        do {
            while let chunk = try handle.read(upToCount: 256 * 1024), !chunk.isEmpty {
                try await writer.write(Array(chunk)[...])
            }
            try await writer.finish()
        } catch {
            await writer.abort()
            throw error
        }
        return key
    }
}
