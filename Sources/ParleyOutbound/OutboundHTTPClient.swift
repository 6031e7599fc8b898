import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ParleyCore
import ParleyRuntime
import Synchronization

/// Sends Parley's own requests (webhooks) as the outbound rule allows (ParleyCore's article OutboundRequests):
/// before each request the URL's host is resolved and every address checked
/// (``ParleyCore/OutboundRule``), and the connection goes to the checked address while the
/// request, its TLS name and the certificate check keep the host's name, so a name that
/// resolves anew to a refused address (DNS rebinding) reaches nothing. Redirects are not
/// followed; an answer's body is read up to 64 KiB.
///
/// One HTTP client is kept per host and address (connections are reused between requests);
/// a host that moves to another address gets a new one, and the oldest clients are shut down
/// beyond ``maximumClients``.
public final class OutboundHTTPClient: WebhookTransport, Sendable {
    let rule: OutboundRule
    let resolver: any AddressResolver
    let caFile: String?
    let connectTimeout: Duration
    static let maximumClients = 64
    private let clients = Mutex<[(key: String, client: HTTPClient)]>([])
    private let targets = Mutex<[String: (target: OutboundTarget, until: ContinuousClock.Instant)]>([:])

    public init(
        rule: OutboundRule, resolver: any AddressResolver, caFile: String? = nil,
        connectTimeout: Duration = .seconds(5)
    ) {
        self.rule = rule
        self.resolver = resolver
        self.caFile = caFile
        self.connectTimeout = connectTimeout
    }

    /// Sends a POST and reads its answer (at most 64 KiB of it), all within `timeout`.
    public func post(_ url: String, headers: [(String, String)], body: Data, timeout: Duration) async throws
        -> (status: Int, body: Data)
    {
        let answer = try await send(
            .POST, url, headers: headers, body: body, limit: Self.answerLimit, cut: true, timeout: timeout)
        return (answer.status, answer.body)
    }

    /// A GET whose answer is at most `limit` bytes (``AnswerTooLarge`` beyond), all within
    /// `timeout`: its status, headers and body.
    public func get(_ url: String, headers: [(String, String)], limit: Int, timeout: Duration) async throws
        -> (status: Int, headers: [(String, String)], body: Data)
    {
        try await send(.GET, url, headers: headers, body: nil, limit: limit, cut: false, timeout: timeout)
    }

    /// An answer longer than the reader takes.
    public struct AnswerTooLarge: Error {}

    /// Failures other than the rule's refusal (a ``ParleyCore/ParleyError``) and an answer too
    /// large are told as ``ParleyCore/OutboundRequestFailure``.
    private func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)], body: Data?, limit: Int, cut: Bool,
        timeout: Duration
    ) async throws -> (status: Int, headers: [(String, String)], body: Data) {
        do {
            return try await exchange(
                method, url, headers: headers, body: body, limit: limit, cut: cut, timeout: timeout)
        } catch let error where !(error is ParleyError || error is AnswerTooLarge) {
            throw Self.failure(error)
        }
    }

    static func failure(_ error: any Error) -> OutboundRequestFailure {
        if error is TimeoutError { return OutboundRequestFailure("timed out") }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .deadlineExceeded, .readTimeout, .writeTimeout:
                return OutboundRequestFailure("timed out")
            case .remoteConnectionClosed: return OutboundRequestFailure("connection closed")
            default: return OutboundRequestFailure("request failed")
            }
        }
        if error is NIOSSLError || error is BoringSSLError { return OutboundRequestFailure("TLS failed") }
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED {
            return OutboundRequestFailure("connection refused")
        }
        // NIOPosix's NIOConnectionError (every address of the host failed) names its errors.
        if String(describing: error).contains("errno: \(ECONNREFUSED)") {
            return OutboundRequestFailure("connection refused")
        }
        return OutboundRequestFailure("request failed")
    }

    private func exchange(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)], body: Data?, limit: Int, cut: Bool,
        timeout: Duration
    ) async throws -> (status: Int, headers: [(String, String)], body: Data) {
        try await withTimeout(timeout) {
            let target = try await self.target(url)
            var request = HTTPClientRequest(url: target.endpoint.url.absoluteString)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body {
                request.headers.replaceOrAdd(name: "content-length", value: "\(body.count)")
                request.body = .bytes(ByteBuffer(bytes: Array(body)))
            }
            let response = try await self.client(for: target).execute(
                request, timeout: .milliseconds(Int64(timeout.seconds * 1000) + 1))
            var answer = Data()
            for try await chunk in response.body {
                guard answer.count + chunk.readableBytes <= limit else {
                    if !cut { throw AnswerTooLarge() }
                    answer.append(contentsOf: chunk.readableBytesView.prefix(limit - answer.count))
                    break
                }
                answer.append(contentsOf: chunk.readableBytesView)
            }
            return (Int(response.status.code), response.headers.map { ($0.name, $0.value) }, answer)
        }
    }

    static let answerLimit = 64 * 1024
    /// How long a checked address is used for its host before the host is resolved and
    /// checked again: the request goes to the checked address, so keeping it is safe, and
    /// a hook called for every batch of messages does not wait for a lookup each time.
    static let targetLifetime: Duration = .seconds(30)

    private func target(_ url: String) async throws -> OutboundTarget {
        let endpoint = try rule.endpoint(url)
        let now = ContinuousClock.now
        if let kept = targets.withLock({ $0[url] }), now < kept.until { return kept.target }
        let target = try await rule.target(endpoint, resolver: resolver)
        targets.withLock { targets in
            if targets.count >= Self.maximumClients { targets.removeAll() }
            targets[url] = (target, now + Self.targetLifetime)
        }
        return target
    }

    private func client(for target: OutboundTarget) -> HTTPClient {
        let key = "\(target.endpoint.host)|\(target.address)"
        let (client, evicted): (HTTPClient, HTTPClient?) = clients.withLock { clients in
            if let index = clients.firstIndex(where: { $0.key == key }) { return (clients[index].client, nil) }
            let made = makeClient(for: target)
            clients.append((key, made))
            let evicted = clients.count > Self.maximumClients ? clients.removeFirst().client : nil
            return (made, evicted)
        }
        if let evicted { Task { try? await evicted.shutdown() } }
        return client
    }

    private func makeClient(for target: OutboundTarget) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.redirectConfiguration = .disallow
        // A failed connection is an attempt's failure, retried as the caller's policy says; the
        // client's own retries would hold the attempt until its time is up and hide why.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(connectTimeout.components.seconds)
        // The request names the host; the connection goes to the address checked for it.
        if IPAddress(target.endpoint.host) == nil {
            configuration.dnsOverride = [target.endpoint.host: target.address.description]
        }
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    public func shutdown() async throws {
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return clients.map(\.client)
        }
        for client in all { try await client.shutdown() }
    }
}
