import Foundation
import Hummingbird
import NIOCore
import ParleyCore

/// `/v1/files`, file content and thumbnails, public files, and `/v1/rooms/{id}/files`. Who may
/// read a file is `FileAccess`'s decision.
public struct FilesController: Sendable {
    let files: any FileRepository
    let access: FileAccess
    /// Holds the per-user limits: uploads a day and the storage quota.
    let rooms: RoomService
    let store: any BlobStore
    let links: FileLinks
    let tokens: AccessTokens
    /// Thumbnails and probes for images and videos; nil when no media worker runs.
    let mediaJobs: (any JobQueue)?
    /// Largest upload in bytes.
    let uploadLimit: Int64

    public init(
        files: any FileRepository, store: any BlobStore, links: FileLinks, rooms: RoomService, tokens: AccessTokens,
        mediaJobs: (any JobQueue)?, uploadLimit: Int64 = 100 * 1024 * 1024
    ) {
        self.files = files
        self.access = FileAccess(files: files, links: links, rooms: rooms)
        self.rooms = rooms
        self.store = store
        self.links = links
        self.tokens = tokens
        self.mediaJobs = mediaJobs
        self.uploadLimit = uploadLimit
    }

    /// Upload, metadata and room listings: bearer only.
    func addSignedInRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("files") { request, context in
            let file = try await upload(request, userID: context.identity.userID)
            return JSONResponse(.created, links.object(file))
        }
        group.get("files/:id") { _, context in
            let file = try await access.readable(try context.parameters.id("id"), by: context.identity.userID)
            return JSONResponse(.ok, links.object(file))
        }
        group.get("rooms/:id/files") { request, context in
            let roomID = try context.parameters.id("id")
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await access.roomFiles(
                roomID: roomID, by: context.identity.userID, before: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found.map { links.object($0) }) { String($0.id) })
        }
    }

    /// Content and thumbnails (a header, `?access_token=` or a signed URL: players send no
    /// headers), and public files (nothing).
    func addContentRoutes(to v1: RouterGroup<ParleyRequestContext>) {
        for method in [HTTPRequest.Method.get, .head] {
            v1.on("files/:id/content", method: method) { request, context in
                let fileID = try context.parameters.id("id")
                let file = try await authorised(request, fileID: fileID, path: FileLinks.contentPath(fileID))
                return content(file).response(to: request)
            }
            v1.on("files/:id/thumbnails/:size", method: method) { request, context in
                let fileID = try context.parameters.id("id")
                guard let size = context.parameters.get("size").flatMap(ThumbnailSize.init(rawValue:)) else {
                    throw ParleyError.notFound("Thumbnails are small or large.")
                }
                let file = try await authorised(request, fileID: fileID, path: FileLinks.thumbnailPath(fileID, size))
                guard let key = file.thumbnailKey(size), let bytes = try await store.size(key: key) else {
                    throw ParleyError.notFound("The thumbnail is not made yet.")
                }
                let thumbnail = ContentResponse(
                    store: store, key: key, size: bytes, mimeType: "image/jpeg",
                    entityTag: "\"\(file.checksumHex)-\(size.rawValue)\"", lastModified: file.createdAt, fileName: nil,
                    cacheControl: "private, max-age=86400")
                return thumbnail.response(to: request)
            }
            v1.on("public/files/:id/:name", method: method) { request, context in
                let fileID = try context.parameters.id("id")
                let file = try await access.published(fileID, name: context.parameters.get("name") ?? "")
                return content(file, isPublic: true).response(to: request)
            }
        }
    }

    private func content(_ file: StoredFile, isPublic: Bool = false) -> ContentResponse {
        ContentResponse(
            store: store, key: file.storageKey, size: file.size, mimeType: file.mimeType, entityTag: file.entityTag,
            lastModified: file.createdAt,
            fileName: file.name, cacheControl: isPublic ? "public, max-age=86400" : "private, max-age=86400")
    }

    /// A signed URL for exactly this path (and the viewer it names), else the caller's token
    /// (header or `access_token`).
    private func authorised(_ request: Request, fileID: Int64, path: String) async throws -> StoredFile {
        let query = request.uri.queryParameters
        if let expires = query["expires"].flatMap({ Int64($0) }), let signature = query["signature"] {
            // A `viewer` that is not a number cannot verify: the signature covers its text.
            let viewer = try query["viewer"].map { text in
                guard let id = Int64(text) else { throw ParleyError(.forbidden, "The link is invalid or has expired.") }
                return id
            }
            return try await access.signed(
                fileID, path: path, expires: expires, viewer: viewer, signature: String(signature))
        }
        return try await access.readable(fileID, by: try await tokens.caller(of: request, queryToken: true).userID)
    }

    // MARK: Upload

    private func upload(_ request: Request, userID: Int64) async throws -> StoredFile {
        let contentType = request.headers[.contentType] ?? ""
        // Multipart framing adds a little; anything declared far beyond the limit is refused unread.
        let declared = request.headers[.contentLength].flatMap({ Int64($0) })
        if let declared, declared > uploadLimit + 64 * 1024 {
            throw ParleyError(.tooLarge, "The file is larger than \(uploadLimit) bytes.")
        }
        let quota = rooms.limits.storageQuotaBytes
        let stored = try await files.storedBytes(uploadedBy: userID)
        // A declared body beyond the quota is refused unread (its framing may add 64 KiB).
        if let declared, stored + declared > quota + 64 * 1024 { throw Self.quotaExceeded(quota) }
        try await rooms.spend("uploads", 1, of: .perDay(rooms.limits.uploadsPerDay), by: userID)
        let key = BlobKey.generate()
        let received: ReceivedUpload
        if contentType.lowercased().hasPrefix("multipart/form-data") {
            guard let boundary = MultipartUpload.boundary(of: contentType) else {
                throw ParleyError.invalidRequest("multipart/form-data needs a boundary", field: "file")
            }
            received = try await receiveMultipart(request.body, boundary: boundary, key: key)
        } else {
            let query = request.uri.queryParameters
            received = try await receiveRaw(
                request.body, declaredType: contentType.isEmpty ? nil : contentType, key: key,
                name: query["name"].map(String.init), protected: query["protected"].map(String.init))
        }
        let (name, fileExtension) = FileName.sanitize(received.name)
        do {
            guard stored + received.size <= quota else { throw Self.quotaExceeded(quota) }
            let file = try await files.create(
                NewFile(
                    uploadedById: userID, name: name, fileExtension: fileExtension, size: received.size,
                    mimeType: received.mimeType, checksum: received.checksum, isProtected: received.isProtected,
                    storageKey: key))
            if let mediaJobs, received.mimeType.hasPrefix("image/") || received.mimeType.hasPrefix("video/") {
                do {
                    try await mediaJobs.enqueue(MediaJob(fileID: file.id).json())
                } catch {
                    // Without its job the file would never get its sizes and thumbnails: the
                    // upload fails whole (503) and the client sends it again. A row left by a
                    // failing database too is an orphan the sweeper removes.
                    _ = try? await files.deleteOrphan(id: file.id)
                    throw error
                }
            }
            return file
        } catch {
            try? await store.delete(key: key)
            throw error
        }
    }

    static func quotaExceeded(_ quota: Int64) -> ParleyError {
        ParleyError(.quotaExceeded, "Your files would take more than your \(quota) bytes; delete some first.")
    }

    struct ReceivedUpload {
        let size: Int64
        let checksum: [UInt8]
        let mimeType: String
        let name: String?
        let isProtected: Bool
    }

    private func receiveRaw(
        _ body: RequestBody, declaredType: String?, key: String, name: String?, protected: String?
    ) async throws -> ReceivedUpload {
        let isProtected = try Self.flag(protected)
        let sink = UploadSink(
            writer: try await store.makeWriter(key: key), limit: uploadLimit, declaredType: declaredType)
        do {
            for try await buffer in body { try await sink.append(ArraySlice(buffer.readableBytesView)) }
            let (size, checksum, mimeType) = try await sink.finish()
            return ReceivedUpload(
                size: size, checksum: checksum, mimeType: mimeType, name: name, isProtected: isProtected)
        } catch {
            await sink.writer.abort()
            throw error
        }
    }

    private func receiveMultipart(_ body: RequestBody, boundary: String, key: String) async throws -> ReceivedUpload {
        let parts = MultipartUpload(boundary: boundary)
        var sink: UploadSink?
        // Every byte counts, not only the file's: headers, other fields and the epilogue
        // could otherwise grow without bound.
        var received: Int64 = 0
        var fileEnd: Int64?
        do {
            for try await buffer in body {
                received += Int64(buffer.readableBytes)
                if received > uploadLimit + 64 * 1024 {
                    throw ParleyError(.tooLarge, "The file is larger than \(uploadLimit) bytes.")
                }
                try parts.execute(buffer)
                // Around the file, only small fields and framing are expected.
                if !parts.fileStarted && received > 64 * 1024 {
                    throw ParleyError.invalidRequest(
                        "the multipart body has no file part in its first 64 KiB", field: "file")
                }
                if parts.fileComplete {
                    let end = fileEnd ?? received
                    fileEnd = end
                    if received - end > 64 * 1024 {
                        throw ParleyError.invalidRequest("the multipart body goes on after the file", field: "file")
                    }
                }
                if sink == nil, parts.fileStarted {
                    sink = UploadSink(
                        writer: try await store.makeWriter(key: key), limit: uploadLimit,
                        declaredType: parts.fileType)
                }
                if let sink, !parts.pending.isEmpty {
                    try await sink.append(parts.pending[...])
                    parts.pending.removeAll(keepingCapacity: true)
                }
            }
            guard let sink, parts.fileComplete else {
                throw ParleyError.invalidRequest("the multipart body has no complete file part", field: "file")
            }
            // Checked before the blob is made visible: a refusal must leave nothing behind.
            let isProtected = try Self.flag(parts.protectedField)
            let (size, checksum, mimeType) = try await sink.finish()
            return ReceivedUpload(
                size: size, checksum: checksum, mimeType: mimeType, name: parts.fileName, isProtected: isProtected)
        } catch {
            await sink?.writer.abort()
            throw error
        }
    }

    /// `protected` as sent by forms and query strings; protected unless it says otherwise.
    static func flag(_ text: String?) throws -> Bool {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() else { return true }
        switch text {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ParleyError.invalidRequest("protected must be true or false", field: "protected")
        }
    }
}

extension FileObject: ListItem {
    static let listKey = "files"
}
