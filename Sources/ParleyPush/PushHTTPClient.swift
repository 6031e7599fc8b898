import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ParleyCore
import Synchronization

/// The HTTP client every provider sends through.
///
/// Requests to one host share one HTTP/2 connection with many concurrent streams (the
/// providers negotiate `h2` by ALPN), which is how APNs and FCM ask to be used.
public final class PushHTTPClient: Sendable {
    public struct Response: Sendable {
        public let status: Int
        public let headers: HTTPHeaders
        public let body: Data
    }

    let client: HTTPClient
    let timeout: Duration
    private let openedHTTP2 = ConnectionCounter()

    /// - Parameters:
    ///   - caFile: extra trust root (PEM), for gateways with a private CA.
    ///   - connectTimeout: for the TCP connection and its TLS handshake.
    ///   - eventLoopGroup: where connections run (NIO's shared loops unless given).
    public init(
        caFile: String? = nil, timeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(5),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            // In addition to the system's roots: Apple's and Google's must stay trusted.
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // A redirected POST would become a GET without the push, and count as delivered.
        configuration.redirectConfiguration = .disallow
        let (seconds, attoseconds) = connectTimeout.components
        configuration.timeout.connect = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        configuration.httpVersion = .automatic
        // No spans of its own: an APNs request's URL holds the device's token, which a trace
        // must not carry. The push role's span (``ParleyCore/PipelineTrace``) times the send.
        configuration.tracing.tracer = nil
        let counter = openedHTTP2
        configuration.http2ConnectionDebugInitializer = { channel in
            counter.increment()
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.timeout = timeout
    }

    /// Answers of up to 64 KiB are read; providers answer with small JSON.
    func post(_ url: String, headers: [(String, String)], body: Data) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.replaceOrAdd(name: "content-length", value: "\(body.count)")
        request.body = .bytes(ByteBuffer(bytes: Array(body)))
        let seconds = timeout.components.seconds
        let response = try await client.execute(request, timeout: .seconds(max(seconds, 1)))
        let buffer = try await response.body.collect(upTo: 64 * 1024)
        let bytes = Data(buffer.readableBytesView)
        return Response(status: Int(response.status.code), headers: response.headers, body: bytes)
    }

    /// HTTP/2 connections opened so far: one per provider host while it stays up, however
    /// many pushes are in flight.
    public var http2ConnectionsOpened: Int { openedHTTP2.value }

    public func shutdown() async throws {
        try await client.shutdown()
    }
}

extension PushHTTPClient.Response {
    /// `Retry-After` as delta-seconds or an HTTP date, bounded to an hour.
    var retryAfter: Duration? {
        guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(value), seconds >= 0 { return .seconds(min(seconds, 3600)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(Int(min(max(date.timeIntervalSinceNow, 0), 3600).rounded(.up)))
    }

    /// The body as JSON, when it is a JSON object.
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }
}

final class ConnectionCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
