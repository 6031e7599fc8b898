import Foundation

/// Who may read a file, decided here for every way one is opened: its metadata and content by
/// a signed-in user, a signed URL (players send no headers), a public link, a room's listing.
/// A file the caller may not read answers `not-found`, so its existence stays private.
public struct FileAccess: Sendable {
    let files: any FileRepository
    let links: FileLinks
    let rooms: any RoomRoleCheck

    public init(files: any FileRepository, links: FileLinks, rooms: any RoomRoleCheck) {
        self.files = files
        self.links = links
        self.rooms = rooms
    }

    /// The uploader reads their file; anyone else through a message of a room they read, or as
    /// an avatar (``FileRepository/canRead(fileID:userID:)``).
    public func readable(_ fileID: Int64, by userID: Int64) async throws -> StoredFile {
        guard let file = try await files.find(id: fileID) else { throw ParleyError.notFound() }
        if file.uploadedById == userID { return file }
        guard try await files.canRead(fileID: fileID, userID: userID) else { throw ParleyError.notFound() }
        return file
    }

    /// A URL signed for exactly `path` until `expires`: `forbidden` when the signature is wrong
    /// or has expired. A link names its viewer, who must still read the file, by the same rule
    /// as a token (`not-found` otherwise: a removal or a deletion ends their links at once); a
    /// link naming none opens only a data export.
    public func signed(
        _ fileID: Int64, path: String, expires: Int64, viewer: Int64?, signature: String
    ) async throws -> StoredFile {
        guard links.verify(path: path, expires: expires, viewer: viewer, signature: signature) else {
            throw ParleyError(.forbidden, "The link is invalid or has expired.")
        }
        if let viewer { return try await readable(fileID, by: viewer) }
        guard let file = try await files.find(id: fileID), try await files.isDataExport(fileID: fileID) else {
            throw ParleyError.notFound()
        }
        return file
    }

    /// A public (unprotected) file under its own name; anything else is not found.
    public func published(_ fileID: Int64, name: String) async throws -> StoredFile {
        guard let file = try await files.find(id: fileID), !file.isProtected,
            name == file.name || name.removingPercentEncoding == file.name
        else { throw ParleyError.notFound() }
        return file
    }

    /// The files attached in a room, newest first, for its readers.
    public func roomFiles(roomID: Int64, by userID: Int64, before: Int64?, limit: Int) async throws -> [StoredFile] {
        _ = try await rooms.require(.reader, roomID: roomID, userID: userID)
        return try await files.roomFiles(roomID: roomID, before: before, limit: limit)
    }
}

/// The room rule files need: whether a user holds at least a role in a room (`RoomService`).
public protocol RoomRoleCheck: Sendable {
    /// The user's role when it is at least `minimum`; `not-found` when they cannot read the
    /// room, `forbidden` when their role is lower.
    func require(_ minimum: RoomRole, roomID: Int64, userID: Int64) async throws -> RoomRole
}

extension RoomService: RoomRoleCheck {}
