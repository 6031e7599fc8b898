import Foundation

/// An uploaded file's metadata (`cloud.file`).
public struct StoredFile: Sendable, Equatable {
    public let id: Int64
    public let uploadedById: Int64
    public let name: String
    public let fileExtension: String
    public let size: Int64
    public let mimeType: String
    /// SHA-256 of the content.
    public let checksum: [UInt8]
    public let isProtected: Bool
    public let submitted: Bool
    /// Where the blob store keeps the content; never derived from user input.
    public let storageKey: String
    public let width: Int?
    public let height: Int?
    public let durationMs: Int64?
    public let thumbnailSmallKey: String?
    public let thumbnailLargeKey: String?
    public let createdAt: Date

    public init(
        id: Int64, uploadedById: Int64, name: String, fileExtension: String, size: Int64, mimeType: String,
        checksum: [UInt8], isProtected: Bool, submitted: Bool, storageKey: String, width: Int?, height: Int?,
        durationMs: Int64?, thumbnailSmallKey: String?, thumbnailLargeKey: String?, createdAt: Date
    ) {
        self.id = id
        self.uploadedById = uploadedById
        self.name = name
        self.fileExtension = fileExtension
        self.size = size
        self.mimeType = mimeType
        self.checksum = checksum
        self.isProtected = isProtected
        self.submitted = submitted
        self.storageKey = storageKey
        self.width = width
        self.height = height
        self.durationMs = durationMs
        self.thumbnailSmallKey = thumbnailSmallKey
        self.thumbnailLargeKey = thumbnailLargeKey
        self.createdAt = createdAt
    }

    public var checksumHex: String { checksum.hexString }

    /// `sha256:<hex>`, as the contract writes checksums.
    public var checksumText: String { "sha256:" + checksumHex }

    /// A strong validator: the content's hash.
    public var entityTag: String { "\"\(checksumHex)\"" }

    public func thumbnailKey(_ size: ThumbnailSize) -> String? {
        size == .small ? thumbnailSmallKey : thumbnailLargeKey
    }
}

/// Thumbnail sizes of the contract: JPEGs fitting 320×320 and 1280×1280.
public enum ThumbnailSize: String, Sendable, CaseIterable {
    case small, large

    public var bound: Int { self == .small ? 320 : 1280 }
}

/// What an upload stores, once its content is in the blob store.
public struct NewFile: Sendable, Equatable {
    public let uploadedById: Int64
    public let name: String
    public let fileExtension: String
    public let size: Int64
    public let mimeType: String
    public let checksum: [UInt8]
    public let isProtected: Bool
    public let storageKey: String

    public init(
        uploadedById: Int64, name: String, fileExtension: String, size: Int64, mimeType: String, checksum: [UInt8],
        isProtected: Bool, storageKey: String
    ) {
        self.uploadedById = uploadedById
        self.name = name
        self.fileExtension = fileExtension
        self.size = size
        self.mimeType = mimeType
        self.checksum = checksum
        self.isProtected = isProtected
        self.storageKey = storageKey
    }
}

/// Width, height and duration found by the media worker, and the thumbnails it stored.
public struct MediaDetails: Sendable, Equatable {
    public var width: Int?
    public var height: Int?
    public var durationMs: Int64?
    public var thumbnailSmallKey: String?
    public var thumbnailLargeKey: String?

    public init(
        width: Int? = nil, height: Int? = nil, durationMs: Int64? = nil, thumbnailSmallKey: String? = nil,
        thumbnailLargeKey: String? = nil
    ) {
        self.width = width
        self.height = height
        self.durationMs = durationMs
        self.thumbnailSmallKey = thumbnailSmallKey
        self.thumbnailLargeKey = thumbnailLargeKey
    }

    public mutating func setThumbnail(_ key: String?, for size: ThumbnailSize) {
        switch size {
        case .small: thumbnailSmallKey = key
        case .large: thumbnailLargeKey = key
        }
    }
}
