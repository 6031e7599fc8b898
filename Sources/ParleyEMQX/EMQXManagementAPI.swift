import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore

/// EMQX 5's REST management API (`/api/v5`), as much of it as Parley needs to end clients and
/// to take a lost room or a blocker's presence from them: an API key and its secret (HTTP
/// Basic), JSON bodies.
public struct EMQXManagementAPI: Sendable {
    public struct Configuration: Sendable {
        /// The dashboard listener, e.g. `http://emqx:18083` (any node of the cluster).
        public var baseURL: String
        public var key: String
        public var secret: String
        public var timeout: Duration

        public init(baseURL: String, key: String, secret: String, timeout: Duration = .seconds(5)) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.key = key
            self.secret = secret
            self.timeout = timeout
        }
    }

    let configuration: Configuration
    /// The process's one client for the API; it makes no spans (a client id in a path is not
    /// the trace's business) and lives as long as the process.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.tracing.tracer = nil
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
    /// Clients asked for per page.
    static let pageSize = 100

    public init(_ configuration: Configuration) { self.configuration = configuration }

    /// The client ids of a user's connections and kept sessions, every page
    /// (`GET /api/v5/clients?username=`).
    public func clientIDs(username: String) async throws -> [String] {
        var ids: [String] = []
        for page in 1...1_000 {
            let query = "username=\(Self.escaped(username))&page=\(page)&limit=\(Self.pageSize)"
            let body = try await send(.GET, "/api/v5/clients?\(query)", accepting: [200])
            let listing = try JSONDecoder().decode(ClientListing.self, from: body)
            ids += listing.data.map(\.clientid)
            guard listing.meta?.hasnext == true, !listing.data.isEmpty else { break }
        }
        return ids
    }

    /// The client ids subscribed to exactly `topic`, every page (`GET /api/v5/subscriptions?topic=`).
    public func subscriberIDs(topic: String) async throws -> [String] {
        var ids: [String] = []
        for page in 1...1_000 {
            let query = "topic=\(Self.escaped(topic))&page=\(page)&limit=\(Self.pageSize)"
            let body = try await send(.GET, "/api/v5/subscriptions?\(query)", accepting: [200])
            let listing = try JSONDecoder().decode(ClientListing.self, from: body)
            ids += listing.data.map(\.clientid)
            guard listing.meta?.hasnext == true, !listing.data.isEmpty else { break }
        }
        return ids
    }

    /// Disconnects a client and ends its session (`DELETE /api/v5/clients/{clientid}`); one
    /// already gone is no error.
    public func kick(clientID: String) async throws {
        _ = try await send(.DELETE, "/api/v5/clients/\(Self.escaped(clientID))", accepting: [204, 404])
    }

    /// Drops the client's cached authorisation answers, so that its next publish or subscribe
    /// is asked of Parley again (`DELETE /api/v5/clients/{clientid}/authorization/cache`).
    public func cleanAuthorizationCache(clientID: String) async throws {
        _ = try await send(
            .DELETE, "/api/v5/clients/\(Self.escaped(clientID))/authorization/cache", accepting: [204, 404])
    }

    /// Ends a client's subscription (`POST /api/v5/clients/{clientid}/unsubscribe`): EMQX asks
    /// the authoriser at SUBSCRIBE only, so a member who lost a room would otherwise go on
    /// receiving it.
    public func unsubscribe(clientID: String, topic: String) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let body = try encoder.encode(["topic": topic])
        _ = try await send(
            .POST, "/api/v5/clients/\(Self.escaped(clientID))/unsubscribe", body: body, accepting: [204, 404])
    }

    private func send(_ method: HTTPMethod, _ path: String, body: Data? = nil, accepting: Set<UInt>) async throws
        -> Data
    {
        var request = HTTPClientRequest(url: configuration.baseURL + path)
        request.method = method
        let credentials = Data("\(configuration.key):\(configuration.secret)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            let (seconds, attoseconds) = configuration.timeout.components
            let timeout = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            response = try await Self.client.execute(request, timeout: timeout)
            answer = try await response.body.collect(upTo: 4 << 20)
        } catch {
            throw EMQXAPIError(status: nil, detail: "EMQX's API did not answer: \(error)")
        }
        guard accepting.contains(response.status.code) else {
            throw EMQXAPIError(
                status: Int(response.status.code),
                detail: "EMQX's API answered \(response.status.code) to \(method.rawValue) \(path.prefix(120))")
        }
        return Data(answer.readableBytesView)
    }

    static func escaped(_ text: String) -> String {
        // RFC 3986's unreserved characters, ASCII only.
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// `GET /api/v5/clients`'s answer, as much as is read.
    struct ClientListing: Decodable {
        struct Client: Decodable { let clientid: String }
        struct Meta: Decodable { let hasnext: Bool? }
        let data: [Client]
        let meta: Meta?
    }
}

/// EMQX's API failed: unreachable, answering 5xx or 429, or refusing Parley's key (401, 403:
/// unavailable, retried until an operator mends it, and the outbox's stall alarm says so,
/// rather than a lost room's members silently kept subscribed), or refusing the request itself
/// (other 4xx: not retried).
public struct EMQXAPIError: DependencyError, CustomStringConvertible {
    public let status: Int?
    public let detail: String

    public var isUnavailability: Bool { status.map { $0 >= 500 || [401, 403, 429].contains($0) } ?? true }
    public var description: String { detail }
}
