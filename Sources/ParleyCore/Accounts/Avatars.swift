import Foundation

/// Where avatars are set: a user's, and a room's (which its members are told of).
public protocol AvatarRepository: Sendable {
    func setAvatar(userID: Int64, fileID: Int64?) async throws
    /// Sets the room's avatar; members get the `avatar` change.
    func setAvatar(roomID: Int64, fileID: Int64?, by userID: Int64) async throws
}

/// Avatars: an image the caller uploaded becomes their picture or, for a room's admin, the
/// room's. Its thumbnails (made by the media role) are the sizes clients show.
public struct AvatarService: Sendable {
    let avatars: any AvatarRepository
    let files: any FileRepository
    let rooms: RoomService

    public init(avatars: any AvatarRepository, files: any FileRepository, rooms: RoomService) {
        self.avatars = avatars
        self.files = files
        self.rooms = rooms
    }

    /// `fileID` nil removes the avatar.
    public func setOwn(fileID: Int64?, userID: Int64) async throws {
        try await requireImage(fileID, of: userID)
        try await avatars.setAvatar(userID: userID, fileID: fileID)
    }

    public func setRoom(roomID: Int64, fileID: Int64?, by userID: Int64) async throws {
        try await rooms.require(.admin, roomID: roomID, userID: userID)
        try await requireImage(fileID, of: userID)
        try await avatars.setAvatar(roomID: roomID, fileID: fileID, by: userID)
    }

    /// The one rule of an avatar's file: the caller's own upload, and an image.
    private func requireImage(_ fileID: Int64?, of userID: Int64) async throws {
        guard let fileID else { return }
        guard let file = try await files.find(id: fileID), file.uploadedById == userID else {
            throw ParleyError.notFound("No such file of yours.")
        }
        guard file.mimeType.hasPrefix("image/") else {
            throw ParleyError.invalidRequest("An avatar must be an image.", field: "fileId")
        }
    }
}
