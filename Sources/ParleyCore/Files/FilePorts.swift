import Foundation

/// File metadata and who may read it.
public protocol FileRepository: Sendable {
    func create(_ file: NewFile) async throws -> StoredFile
    func find(id: Int64) async throws -> StoredFile?
    /// The uploader, a reader of a room where a message carries the file, anyone for a user's
    /// avatar, a reader of the room for a room's avatar.
    func canRead(fileID: Int64, userID: Int64) async throws -> Bool
    /// Whether the file is a data export (what a signed link naming no viewer may open).
    func isDataExport(fileID: Int64) async throws -> Bool
    /// Files attached in a room, newest first, with an id below `before`.
    func roomFiles(roomID: Int64, before: Int64?, limit: Int) async throws -> [StoredFile]
    func setMedia(fileID: Int64, _ details: MediaDetails) async throws
    /// Never-submitted files created before `cutoff`.
    /// Uploads no message took: protected ones made before `cutoff`, public ones before
    /// `publicCutoff` (a public file is no free host: it goes sooner).
    func orphans(createdBefore cutoff: Date, publicCreatedBefore publicCutoff: Date, limit: Int) async throws
        -> [StoredFile]
    /// Bytes of the user's uploads kept now (the storage quota's measure).
    func storedBytes(uploadedBy userID: Int64) async throws -> Int64
    /// Removes the metadata if the file is still unsubmitted, returning it as it was deleted
    /// (with the thumbnails made meanwhile); nil when a message took it.
    func deleteOrphan(id: Int64) async throws -> StoredFile?
}

/// Where file content lives: the filesystem or PostgreSQL. Keys are made by the server.
public protocol BlobStore: Sendable {
    /// A blob becomes readable under `key` only when its writer finishes.
    func makeWriter(key: String) async throws -> any BlobWriter
    /// The blob's size, or nil when there is none.
    func size(key: String) async throws -> Int64?
    /// Streams `range` of the blob in chunks to `body`.
    func read(key: String, range: Range<Int64>, into body: (ArraySlice<UInt8>) async throws -> Void) async throws
    func delete(key: String) async throws
    /// Drops the pieces of uploads that never finished (a crashed upload).
    func removeAbandoned(startedBefore cutoff: Date) async throws
}

/// One blob being written.
public protocol BlobWriter: Sendable {
    func write(_ bytes: ArraySlice<UInt8>) async throws
    /// Makes the blob visible (atomically).
    func finish() async throws
    /// Drops what was written.
    func abort() async
}

/// Width, height, duration and thumbnails of one file, made from a local copy of its content.
public protocol MediaProcessor: Sendable {
    /// - Returns: details, with the thumbnails as local JPEG paths in the key fields.
    func process(input: String, mimeType: String, workDirectory: String) async throws -> MediaDetails
}

/// Work for the `media` role.
public struct MediaJob: Codable, Sendable, Equatable {
    public let fileID: Int64

    public init(fileID: Int64) { self.fileID = fileID }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
