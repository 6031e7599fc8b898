import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import ParleyCore
import ParleyOutbound
import ParleyRuntime
import ServiceLifecycle

/// Reads an issuer's JWKS over HTTPS: trusted through the system's CA store plus an extra
/// bundle (`PARLEY_AUTH_CA_FILE`), only where the outbound rule allows (the address checked,
/// then connected to: ParleyCore's `OutboundRule`, `PARLEY_OUTBOUND_ALLOW`), no redirects, an
/// answer of at most ``sizeLimit`` bytes within ``timeout``, kept as its
/// `Cache-Control: max-age` says.
///
/// A `Service` only to close its connections when the process stops.
public final class HTTPSKeyFetcher: Service {
    /// Key documents are a few kilobytes; anything this large is not one.
    public static let sizeLimit = 256 * 1024

    let client: OutboundHTTPClient
    let timeout: Duration

    /// - Parameters:
    ///   - caFile: a PEM bundle of extra trust roots, read now: a file that holds no
    ///     certificate throws ``IssuerKeyReadError``, so a wrong setting stops the start.
    ///   - rule: where keys may be read from (an issuer on a private network needs its range
    ///     in `PARLEY_OUTBOUND_ALLOW`).
    ///   - timeout: for the whole read, lookup and connection to last byte.
    public init(
        caFile: String? = nil, rule: OutboundRule = OutboundRule(),
        resolver: any AddressResolver = SystemAddressResolver(), timeout: Duration = .seconds(10)
    ) throws {
        if let caFile {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw IssuerKeyReadError("\(caFile) is not a readable PEM file of certificates")
            }
            guard !roots.isEmpty else { throw IssuerKeyReadError("\(caFile) holds no certificate") }
        }
        // In addition to the system's roots: issuers with public certificates stay trusted.
        client = OutboundHTTPClient(rule: rule, resolver: resolver, caFile: caFile)
        self.timeout = timeout
    }

    /// The document at `url` and its `max-age`; any answer but 200, one too large or too
    /// slow, or an address the rule refuses, throws.
    public func fetch(_ url: URL) async throws -> (document: [UInt8], maxAge: Duration?) {
        let answer: (status: Int, headers: [(String, String)], body: Data)
        do {
            answer = try await client.get(
                url.absoluteString, headers: [("accept", "application/jwk-set+json, application/json")],
                limit: Self.sizeLimit, timeout: timeout)
        } catch is TimeoutError {
            throw IssuerKeyReadError("\(url.absoluteString) did not answer within \(timeout)")
        } catch is OutboundHTTPClient.AnswerTooLarge {
            throw IssuerKeyReadError("\(url.absoluteString) answered more than \(Self.sizeLimit) bytes")
        } catch let refused as ParleyError {
            throw IssuerKeyReadError("\(url.absoluteString): \(refused.detail)")
        }
        guard answer.status == 200 else {
            throw IssuerKeyReadError("\(url.absoluteString) answered \(answer.status)")
        }
        let cacheControl = answer.headers.filter { $0.0.lowercased() == "cache-control" }.map(\.1)
        return (Array(answer.body), CacheControl.maxAge(cacheControl))
    }

    /// Waits for the process to stop, then closes the connections.
    public func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }

    /// Closes the connections (when not run as a service).
    public func shutdown() async throws {
        try await client.shutdown()
    }
}

/// Why an issuer's keys could not be read, for the log (``IssuerKeysUnavailable`` carries it).
public struct IssuerKeyReadError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
