import Crypto
import Foundation

/// URLs in file objects: a signed, expiring URL for protected content (players and AirPlay
/// send no headers), a plain one for public files.
///
/// A signature is HMAC-SHA256 over the path and the expiry, so it opens exactly one file's
/// content or one thumbnail until then, for whoever holds the URL.
public struct FileLinks: Sendable {
    let key: SymmetricKey
    /// Prepended to paths (`https://chat.example.com`); empty for paths relative to the API.
    public let baseURL: String
    public let lifetime: Duration

    public init(key: SymmetricKey, baseURL: String = "", lifetime: Duration = .seconds(86_400)) {
        self.key = key
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.lifetime = lifetime
    }

    /// A key of its own derived from the MQTT token key, so operators manage one secret.
    public init(deriveFrom secret: [UInt8], baseURL: String = "", lifetime: Duration = .seconds(86_400)) {
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), info: Array("parley file links v1".utf8), outputByteCount: 32)
        self.init(key: derived, baseURL: baseURL, lifetime: lifetime)
    }

    public static func contentPath(_ fileID: Int64) -> String { "/v1/files/\(fileID)/content" }
    public static func thumbnailPath(_ fileID: Int64, _ size: ThumbnailSize) -> String {
        "/v1/files/\(fileID)/thumbnails/\(size.rawValue)"
    }
    public static func publicPath(_ fileID: Int64, name: String) -> String {
        let allowed = CharacterSet(charactersIn: "-._~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "/v1/public/files/\(fileID)/\(name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "file")"
    }

    public func signed(_ path: String, now: Date = Date()) -> String {
        signed(path, expiresAt: now.addingTimeInterval(Double(lifetime.components.seconds)))
    }

    /// A URL that opens `path` until `expiresAt` (a data export's download).
    public func signed(_ path: String, expiresAt: Date) -> String {
        let expires = Int64(expiresAt.timeIntervalSince1970)
        return "\(baseURL)\(path)?expires=\(expires)&signature=\(signature(path: path, expires: expires))"
    }

    /// Whether a signature opens `path` now.
    public func verify(path: String, expires: Int64, signature: String, now: Date = Date()) -> Bool {
        guard expires >= Int64(now.timeIntervalSince1970), let given = Base64URL.decode(signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            given, authenticating: Array("\(path)|\(expires)".utf8), using: key)
    }

    func signature(path: String, expires: Int64) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array("\(path)|\(expires)".utf8), using: key)))
    }

    /// The contract's file object.
    public func object(_ file: StoredFile, now: Date = Date()) -> FileObject {
        let url =
            file.isProtected
            ? signed(Self.contentPath(file.id), now: now) : baseURL + Self.publicPath(file.id, name: file.name)
        return FileObject(
            file, url: url,
            small: file.thumbnailSmallKey.map { _ in signed(Self.thumbnailPath(file.id, .small), now: now) },
            large: file.thumbnailLargeKey.map { _ in signed(Self.thumbnailPath(file.id, .large), now: now) })
    }
}

/// `{id, name, extension, size, mimeType, checksum, protected, createdAt, uploadedById, url,
/// thumbnails: {small, large}, width, height, durationMs}`; absent values are null. What a client
/// sees of a stored file: no storage keys.
public struct FileObject: Sendable, Equatable, Codable {
    public struct Thumbnails: Sendable, Equatable, Codable {
        public let small: String?
        public let large: String?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(small, forKey: .small)
            try container.encode(large, forKey: .large)
        }

        enum CodingKeys: String, CodingKey { case small, large }
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
        try container.encode(url, forKey: .url)
        try container.encode(thumbnails, forKey: .thumbnails)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(durationMs, forKey: .durationMs)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, `extension`, size, mimeType, checksum, protected, createdAt, uploadedById, url, thumbnails
        case width, height, durationMs
    }
}
