import Foundation
import ParleyCore

/// Reads each issuer's keys from where its entry says: over HTTPS or from a file.
public struct IssuerKeySources: IssuerKeyFetcher {
    let https: HTTPSKeyFetcher?
    let files = FileKeyFetcher()

    /// - Parameter https: nil when no issuer's keys are at a URL.
    public init(https: HTTPSKeyFetcher?) {
        self.https = https
    }

    public func fetch(_ source: TrustedIssuer.KeySource) async throws -> (document: [UInt8], maxAge: Duration?) {
        switch source {
        case .url(let url):
            guard let https else { throw IssuerKeyReadError("no HTTPS client for \(url.absoluteString)") }
            return try await https.fetch(url)
        case .file(let path):
            // Kept for the least time: a key removed from the file stops signing in within it.
            return (try await files.fetch(path), nil)
        }
    }
}
