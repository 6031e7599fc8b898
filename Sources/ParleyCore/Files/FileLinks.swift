import Crypto
import Foundation

/// URLs in file objects: a signed, expiring URL for protected content (players and AirPlay
/// send no headers), a plain one for public files.
///
/// A link names its viewer: the signature is HMAC-SHA256 over the path, the expiry and the
/// viewer's id, and ``FileAccess`` opens it only while that viewer may still read the file,
/// so a removal or a deletion ends it at once (<doc:SignedFileLinks>). A file object is made
/// without a viewer (``object(_:)``): its URLs are signed when it is encoded for one
/// (``FileViewer``), and stay unsigned, needing a token, in payloads shared by many.
public struct FileLinks: Sendable {
    let key: SymmetricKey
    /// Prepended to paths (`https://chat.example.com`); empty for paths relative to the API.
    public let baseURL: String
    /// How long a signed URL opens its file, access permitting (`PARLEY_SIGNED_URL_TTL`).
    public let lifetime: Duration

    public static let defaultLifetime = Duration.seconds(3_600)

    public init(key: SymmetricKey, baseURL: String = "", lifetime: Duration = Self.defaultLifetime) {
        self.key = key
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.lifetime = lifetime
    }

    /// A key of its own derived from the MQTT token key, so operators manage one secret.
    public init(deriveFrom secret: [UInt8], baseURL: String = "", lifetime: Duration = Self.defaultLifetime) {
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

    /// A URL that opens `path` for `viewer` for the next ``lifetime``, while they may read it.
    public func signed(_ path: String, viewer: Int64, now: Date = Date()) -> String {
        signed(path, expiresAt: now.addingTimeInterval(Double(lifetime.components.seconds)), viewer: viewer)
    }

    /// A URL that opens `path` until `expiresAt`: for `viewer` while they may read it, or,
    /// without one, only a data export's file (its owner's download).
    public func signed(_ path: String, expiresAt: Date, viewer: Int64? = nil) -> String {
        let expires = Int64(expiresAt.timeIntervalSince1970)
        let named = viewer.map { "&viewer=\($0)" } ?? ""
        return "\(baseURL)\(path)?expires=\(expires)\(named)&signature=\(signature(path, expires, viewer))"
    }

    /// Whether a signature opens `path` for `viewer` (nil: a link naming none) now. Whether the
    /// viewer may still read the file is ``FileAccess``'s question.
    public func verify(path: String, expires: Int64, viewer: Int64?, signature: String, now: Date = Date()) -> Bool {
        guard expires >= Int64(now.timeIntervalSince1970), let given = Base64URL.decode(signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            given, authenticating: Self.signedText(path, expires, viewer), using: key)
    }

    func signature(_ path: String, _ expires: Int64, _ viewer: Int64?) -> String {
        Base64URL.encode(
            Array(HMAC<SHA256>.authenticationCode(for: Self.signedText(path, expires, viewer), using: key)))
    }

    /// `path|expires`, or `path|expires|viewer`: neither passes for the other, as no path
    /// holds a `|`.
    static func signedText(_ path: String, _ expires: Int64, _ viewer: Int64?) -> [UInt8] {
        Array((viewer.map { "\(path)|\(expires)|\($0)" } ?? "\(path)|\(expires)").utf8)
    }

    /// The contract's file object, its URLs unsigned: encoded for a ``FileViewer`` they are
    /// signed for that viewer; encoded for no one (MQTT payloads every member shares) they
    /// need a token, and `GET /v1/files/{id}` answers them signed.
    public func object(_ file: StoredFile) -> FileObject {
        let url = baseURL + (file.isProtected ? Self.contentPath(file.id) : Self.publicPath(file.id, name: file.name))
        return FileObject(
            file, url: url,
            small: file.thumbnailSmallKey.map { _ in baseURL + Self.thumbnailPath(file.id, .small) },
            large: file.thumbnailLargeKey.map { _ in baseURL + Self.thumbnailPath(file.id, .large) })
    }
}
