import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import ParleyCore
import ParleyRuntime
import ServiceLifecycle

/// Reads an issuer's JWKS over HTTPS: trusted through the system's CA store plus an extra
/// bundle (`PARLEY_AUTH_CA_FILE`), no redirects, an answer of at most ``sizeLimit`` bytes
/// within ``timeout``, kept as its `Cache-Control: max-age` says.
///
/// A `Service` only to close its connections when the process stops.
public final class HTTPSKeyFetcher: Service {
    /// Key documents are a few kilobytes; anything this large is not one.
    public static let sizeLimit = 256 * 1024

    let client: HTTPClient
    let timeout: Duration

    /// - Parameters:
    ///   - caFile: a PEM bundle of extra trust roots, read now: a file that holds no
    ///     certificate throws ``IssuerKeyReadError``, so a wrong setting stops the start.
    ///   - timeout: for the whole read, connection to last byte.
    public init(
        caFile: String? = nil, timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw IssuerKeyReadError("\(caFile) is not a readable PEM file of certificates")
            }
            guard !roots.isEmpty else { throw IssuerKeyReadError("\(caFile) holds no certificate") }
            // In addition to the system's roots: issuers with public certificates stay trusted.
            tls.additionalTrustRoots = [.certificates(roots)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // Keys come from the address the operator wrote, not from wherever it points.
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(5)
        configuration.tracing.tracer = nil
        client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.timeout = timeout
    }

    /// The document at `url` and its `max-age`; any answer but 200, one too large or too
    /// slow throws.
    public func fetch(_ url: URL) async throws -> (document: [UInt8], maxAge: Duration?) {
        let client = self.client
        let limit = Self.sizeLimit
        let limitSeconds = max(1, timeout.components.seconds)
        do {
            return try await withTimeout(timeout) {
                var request = HTTPClientRequest(url: url.absoluteString)
                request.headers.add(name: "accept", value: "application/jwk-set+json, application/json")
                // withTimeout bounds the whole read; this, the request's own part of it.
                let response = try await client.execute(request, timeout: .seconds(Int64(limitSeconds)))
                guard response.status == .ok else {
                    throw IssuerKeyReadError("\(url.absoluteString) answered \(response.status.code)")
                }
                let body: ByteBuffer
                do {
                    body = try await response.body.collect(upTo: limit)
                } catch is NIOTooManyBytesError {
                    throw IssuerKeyReadError("\(url.absoluteString) answered more than \(limit) bytes")
                }
                let maxAge = CacheControl.maxAge(response.headers[canonicalForm: "cache-control"].map(String.init))
                return (Array(body.readableBytesView), maxAge)
            }
        } catch is TimeoutError {
            throw IssuerKeyReadError("\(url.absoluteString) did not answer within \(timeout)")
        }
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
