import Foundation
import Logging
import ParleyCore

/// Builds a user's data export: the JSON documents and the user's files in a ZIP, stored
/// as a file of theirs and offered for `lifetime` through a signed URL.
public struct ExportBuilder: Sendable {
    let exports: any ExportRepository
    let files: any FileRepository
    let store: any BlobStore
    let archiver: any Archiver
    let workRoot: String
    let lifetime: Duration
    let logger: Logger

    public init(
        exports: any ExportRepository, files: any FileRepository, store: any BlobStore, archiver: any Archiver,
        workRoot: String, lifetime: Duration = .seconds(86_400), logger: Logger
    ) {
        self.exports = exports
        self.files = files
        self.store = store
        self.archiver = archiver
        self.workRoot = workRoot
        self.lifetime = lifetime
        self.logger = logger
    }

    public func build(userID: Int64) async throws {
        guard try await exports.find(userID: userID)?.status == .pending else { return }
        do {
            try await pack(userID: userID)
        } catch let failure as PermanentJobFailure {
            // Not worth another attempt: the user sees `failed` and may ask again.
            logger.error("export failed", metadata: ["user": "\(userID)", "error": "\(failure)"])
            try await exports.fail(userID: userID)
        }
    }

    private func pack(userID: Int64) async throws {
        let directory = "\(workRoot)/parley-export-\(UUID().uuidString)"
        let content = "\(directory)/content"
        try FileManager.default.createDirectory(atPath: "\(content)/files", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for document in try await exports.documents(userID: userID) {
            try Data(document.json.utf8).write(to: URL(fileURLWithPath: "\(content)/\(document.name)"))
        }
        var listed: [ExportedFile] = []
        for file in try await exports.files(userID: userID) {
            // An upload whose content never completed, or was swept meanwhile, has nothing to copy.
            guard try await store.size(key: file.storageKey) != nil else { continue }
            let path = "files/\(Self.entryName(file))"
            try await copy(file, to: "\(content)/\(path)")
            listed.append(ExportedFile(file, path: path))
        }
        try JSONCoding.encoder.encode(listed).write(to: URL(fileURLWithPath: "\(content)/files.json"))
        let zip = "\(directory)/export.zip"
        do {
            try await archiver.zip(directory: content, into: zip)
        } catch {
            throw PermanentJobFailure(reason: "the ZIP could not be packed: \(error)")
        }
        let stored = try await storeZip(at: zip, userID: userID)
        let expiresAt = Date().addingTimeInterval(Double(lifetime.components.seconds))
        let eraser = FileEraser(files: files, store: store, logger: logger)
        guard let completed = try await exports.complete(userID: userID, fileID: stored.id, expiresAt: expiresAt)
        else {
            // Another run finished first: this ZIP is held by nothing.
            try await eraser.erase([stored.id])
            return
        }
        try await eraser.erase(completed.replacedFileID.map { [$0] } ?? [])
    }

    /// `<id>-<name>` (the id keeps equal names apart), short enough for any file system.
    static func entryName(_ file: StoredFile) -> String {
        "\(file.id)-\(String(file.name.replacingOccurrences(of: "/", with: "_").prefix(100)))"
    }

    /// An entry of `files.json`: the file's metadata and where its content is in the ZIP.
    struct ExportedFile: Encodable {
        let id: Int64
        let name: String
        let `extension`: String
        let size: Int64
        let mimeType: String
        let checksum: String
        let createdAt: Date
        let path: String

        init(_ file: StoredFile, path: String) {
            id = file.id
            name = file.name
            self.extension = file.fileExtension
            size = file.size
            mimeType = file.mimeType
            checksum = file.checksumHex
            createdAt = file.createdAt
            self.path = path
        }
    }

    private func copy(_ file: StoredFile, to path: String) async throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw PermanentJobFailure(reason: "cannot create a work file")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try await store.read(key: file.storageKey, range: 0..<file.size) { chunk in try handle.write(contentsOf: chunk)
        }
    }

    private func storeZip(at path: String, userID: Int64) async throws -> StoredFile {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw PermanentJobFailure(reason: "the export's ZIP is missing")
        }
        defer { try? handle.close() }
        let key = BlobKey.generate()
        let writer = try await store.makeWriter(key: key)
        var digest = ContentDigest()
        var size: Int64 = 0
        do {
            while let chunk = try handle.read(upToCount: 256 * 1024), !chunk.isEmpty {
                let bytes = Array(chunk)[...]
                digest.update(bytes)
                size += Int64(bytes.count)
                try await writer.write(bytes)
            }
            try await writer.finish()
        } catch {
            await writer.abort()
            throw error
        }
        let day = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        return try await files.create(
            NewFile(
                uploadedById: userID, name: "parley-export-\(day).zip", fileExtension: "zip", size: size,
                mimeType: "application/zip", checksum: digest.finalize(), isProtected: true, storageKey: key))
    }
}
