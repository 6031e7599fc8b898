import Foundation

/// `{id, name, extension, size, mimeType, checksum, protected, createdAt, uploadedById, url,
/// thumbnails: {small, large}, width, height, durationMs}`; absent values are null. What a client
/// sees of a stored file: no storage keys.
///
/// `url` and `thumbnails` hold the links unsigned (they open with a token); an encoder carrying
/// a ``FileViewer`` writes them signed for that viewer.
public struct FileObject: Sendable, Equatable, Codable {
    public struct Thumbnails: Sendable, Equatable, Codable {
        @NullEncoded public var small: String?
        @NullEncoded public var large: String?
    }

    public let id: Int64
    public let name: String
    public let `extension`: String
    public let size: Int64
    public let mimeType: String
    /// `sha256:<hex>`.
    public let checksum: String
    public let `protected`: Bool
    public let createdAt: Date
    public let uploadedById: Int64
    public let url: String
    public let thumbnails: Thumbnails
    public let width: Int?
    public let height: Int?
    public let durationMs: Int64?

    init(_ file: StoredFile, url: String, small: String?, large: String?) {
        id = file.id
        name = file.name
        `extension` = file.fileExtension
        size = file.size
        mimeType = file.mimeType
        checksum = file.checksumText
        `protected` = file.isProtected
        createdAt = file.createdAt
        uploadedById = file.uploadedById
        self.url = url
        thumbnails = Thumbnails(small: small, large: large)
        width = file.width
        height = file.height
        durationMs = file.durationMs
    }

    /// Every key, null when absent (the contract's shape).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(`extension`, forKey: .extension)
        try container.encode(size, forKey: .size)
        try container.encode(mimeType, forKey: .mimeType)
        try container.encode(checksum, forKey: .checksum)
        try container.encode(`protected`, forKey: .protected)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(uploadedById, forKey: .uploadedById)
        if let viewer = encoder.userInfo[FileViewer.userInfoKey] as? FileViewer {
            // A public file's own link needs no signature; its thumbnails do.
            try container.encode(
                `protected` ? viewer.link(FileLinks.contentPath(id)) : url, forKey: .url)
            try container.encode(
                Thumbnails(
                    small: thumbnails.small.map { _ in viewer.link(FileLinks.thumbnailPath(id, .small)) },
                    large: thumbnails.large.map { _ in viewer.link(FileLinks.thumbnailPath(id, .large)) }),
                forKey: .thumbnails)
        } else {
            try container.encode(url, forKey: .url)
            try container.encode(thumbnails, forKey: .thumbnails)
        }
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(durationMs, forKey: .durationMs)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, `extension`, size, mimeType, checksum, protected, createdAt, uploadedById, url, thumbnails
        case width, height, durationMs
    }
}
