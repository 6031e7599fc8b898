import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
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
    /// Answers every request with this status instead, when set.
    let failing = Mutex<Int?>(nil)
    let requests = Mutex<[Request]>([])
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var received: [Request] { requests.withLock { $0 } }

    static func start(clients: [String: [String]]) async throws -> EMQXAPIServer {
        let logger = Logger(label: "emqx-api", factory: { _ in SwiftLogNoOpLogHandler() })
        let router = Router()
        let box = Box()
        router.on("**", method: .get) { request, _ in try await box.value!.answer(request) }
        router.on("**", method: .post) { request, _ in try await box.value!.answer(request) }
        router.on("**", method: .delete) { request, _ in try await box.value!.answer(request) }
        let ready = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { ready.continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger))
        let running = Task {
            defer { ready.continuation.finish() }
            try await group.run()
        }
        var port = 0
        for await value in ready.stream {
            port = value
            break
        }
        let server = EMQXAPIServer(clients: clients, group: group, running: running, port: port)
        box.value = server
        return server
    }

    private init(clients: [String: [String]], group: ServiceGroup, running: Task<Void, any Error>, port: Int) {
        self.clients = clients
        self.group = group
        self.running = running
        self.port = port
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

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
        let ids = clients[String(query["username"] ?? "")] ?? []
        let page = Int(query["page"] ?? "1") ?? 1
        let slice = ids.dropFirst((page - 1) * 2).prefix(2)
        let json = try JSONSerialization.data(withJSONObject: [
            "data": slice.map { ["clientid": $0, "username": String(query["username"] ?? "")] },
            "meta": ["page": page, "limit": 2, "hasnext": ids.count > page * 2],
        ])
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: json)))
    }

    private final class Box: @unchecked Sendable {
        // Set once, before the first request can come.
        var value: EMQXAPIServer?
    }
}
