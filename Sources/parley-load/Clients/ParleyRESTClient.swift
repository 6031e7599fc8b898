import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Parley's REST API as a mobile client uses it: JSON over HTTP/2 (TLS with ALPN), one
/// multiplexed connection per client.
final class ParleyRESTClient: Sendable {
    let baseURL: String
    let http: HTTPClient

    /// - Parameter caFile: the certificate authority of the server's certificate (the local
    ///   deployment's self-signed certificate).
    init(baseURL: String, caFile: String?) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        self.baseURL = baseURL
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// Sends a request and returns the status and body; any status is returned, not thrown.
    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil) async throws -> (
        status: Int, body: Data
    ) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return (Int(response.status.code), Data(buffer: bytes))
    }

    /// Sends JSON and decodes the answer, throwing unless the status is `expected`.
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        expected: Set<Int> = [200, 201], as: Answer.Type
    ) async throws -> Answer {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) }
        let (status, data) = try await send(method, path, token: token, body: body)
        guard expected.contains(status) else {
            throw LoadError(
                "\(method) \(path) answered \(status): \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}

/// The parts of Parley's answers the load generator reads.
enum API {
    struct User: Decodable, Sendable {
        let id: Int64
    }

    /// Any answer with an id (a stored message).
    struct Identified: Decodable, Sendable {
        let id: Int64
    }

    struct MQTTCredentials: Decodable, Sendable {
        let clientId: String
        let username: String
        let password: String
    }

    struct Login: Decodable, Sendable {
        let accessToken: String
        let user: User
        let mqtt: MQTTCredentials
    }

    struct Room: Decodable, Sendable {
        let id: Int64
        let uid: String
    }
}
