import Foundation
import Hummingbird
import NIOCore
import ParleyTestSupport
import Synchronization

/// EMQX 5's management API on loopback, as much as Parley calls: the requests exactly as they
/// came (method, path with query, Basic credentials, body), and answers in EMQX's shapes.
final class EMQXAPIServer: Sendable {
    struct Request: Sendable, Equatable, CustomStringConvertible {
        let method: String
        let path: String
        let authorization: String?
        let body: String

        var description: String { "\(method) \(path) \(body)" }
    }

    /// The client ids `GET /api/v5/clients?username=` lists per user, two to a page.
    let clients: [String: [String]]
    /// The client ids `GET /api/v5/subscriptions?topic=` lists per topic, two to a page.
    let subscribers: [String: [String]]
    /// Answers every request with this status instead, when set.
    let failing = Mutex<Int?>(nil)
    let requests = Mutex<[Request]>([])
    /// Set once, right after the server starts, before a request can come.
    private let server = Mutex<LoopbackHTTPServer?>(nil)

    var baseURL: String { server.withLock { $0?.baseURL ?? "" } }
    var received: [Request] { requests.withLock { $0 } }

    static func start(clients: [String: [String]], subscribers: [String: [String]] = [:]) async throws
        -> EMQXAPIServer
    {
        let api = EMQXAPIServer(clients: clients, subscribers: subscribers)
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .delete] {
            router.on("**", method: method) { [api] request, _ in try await api.answer(request) }
        }
        let server = try await LoopbackHTTPServer.start(router)
        api.server.withLock { $0 = server }
        return api
    }

    private init(clients: [String: [String]], subscribers: [String: [String]]) {
        self.clients = clients
        self.subscribers = subscribers
    }

    func stop() async { await server.withLock { $0 }?.stop() }

    private func answer(_ request: Hummingbird.Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        let path = request.uri.path + (request.uri.query.map { "?\($0)" } ?? "")
        requests.withLock {
            $0.append(
                Request(
                    method: request.method.rawValue, path: path, authorization: request.headers[.authorization],
                    body: String(buffer: body)))
        }
        if let status = failing.withLock({ $0 }) { return Response(status: .init(code: status)) }
        guard request.method == .get else { return Response(status: .noContent) }
        let query = request.uri.queryParameters
        let ids =
            request.uri.path.hasSuffix("/subscriptions")
            ? subscribers[String(query["topic"] ?? "")] ?? [] : clients[String(query["username"] ?? "")] ?? []
        let page = Int(query["page"] ?? "1") ?? 1
        let slice = ids.dropFirst((page - 1) * 2).prefix(2)
        let json = try JSONSerialization.data(withJSONObject: [
            "data": slice.map { ["clientid": $0, "username": String(query["username"] ?? "")] },
            "meta": ["page": page, "limit": 2, "hasnext": ids.count > page * 2],
        ])
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: json)))
    }
}
