import Foundation

/// Whom an answer is encoded for: the file objects it carries get links signed for this user
/// (``FileLinks``), which open only while they may read the file (<doc:SignedFileLinks>).
public struct FileViewer: Sendable {
    public let links: FileLinks
    public let userID: Int64

    public init(links: FileLinks, userID: Int64) {
        self.links = links
        self.userID = userID
    }

    /// Where an encoder carries its viewer.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "parley.fileViewer")!

    /// What an encoder carries to sign file links for this viewer.
    public var userInfo: [CodingUserInfoKey: any Sendable] { [Self.userInfoKey: self] }

    /// Parley's JSON (``JSONCoding``) with this viewer's signed file links.
    public func encoder() -> JSONEncoder { JSONCoding.makeEncoder(userInfo: userInfo) }

    /// `path` signed for this viewer, from now for the links' lifetime.
    func link(_ path: String) -> String { links.signed(path, viewer: userID) }
}
