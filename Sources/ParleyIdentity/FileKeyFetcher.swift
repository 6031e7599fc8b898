import Foundation
import ParleyRuntime

/// Reads an issuer's JWKS from a file (`jwksFile`), on a thread of its own: a file read
/// blocks, and must not hold a thread of the shared pool.
public struct FileKeyFetcher: Sendable {
    /// As for ``HTTPSKeyFetcher/sizeLimit``.
    public static let sizeLimit = HTTPSKeyFetcher.sizeLimit

    public init() {}

    public func fetch(_ path: String) async throws -> [UInt8] {
        try await BlockingCall.run("parley-jwks") { Result { try Self.read(path) } }.get()
    }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw IssuerKeyReadError("\(path) cannot be opened")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: sizeLimit + 1) ?? Data()
        guard data.count <= sizeLimit else { throw IssuerKeyReadError("\(path) is larger than \(sizeLimit) bytes") }
        return Array(data)
    }
}
