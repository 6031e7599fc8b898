import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ParleyTestSupport
import Synchronization

/// An app's backend on loopback that receives webhooks: each request as it came, verified the
/// way the README shows (HMAC-SHA256 of `id.timestamp.body` with the secret's bytes), and
/// answered as the test says (a status, after a delay).
final class WebhookReceiver: Sendable {
    struct Received: Sendable {
        let id: String
        let timestamp: String
        let signature: String
        let body: String

        init(id: String, timestamp: String, signature: String, body: String) {
            self.id = id
            self.timestamp = timestamp
            self.signature = signature
            self.body = body
        }

        /// A signed request as it came: its three Standard Webhooks headers and its body.
        init(_ request: Request, body: ByteBuffer) {
            self.init(
                id: request.headers[HTTPField.Name("webhook-id")!] ?? "",
                timestamp: request.headers[HTTPField.Name("webhook-timestamp")!] ?? "",
                signature: request.headers[HTTPField.Name("webhook-signature")!] ?? "", body: String(buffer: body))
        }

        /// The body as the receiver reads it: `{type, timestamp, data}`.
        var event: Event? { try? JSONDecoder().decode(Event.self, from: Data(body.utf8)) }
        var type: String { event?.type ?? "" }
        var data: Event.Payload { event?.data ?? Event.Payload() }
    }

    /// What the tests read of an event: its type and time, and the payload fields they check.
    struct Event: Decodable {
        struct Payload: Decodable {
            var id: Int?
            var chatRoomId: Int?
            var content: String?
            var userIds: [Int]?
        }

        let type: String
        let timestamp: String
        let data: Payload
    }

    let status = Mutex(200)
    let delay = Mutex(Duration.zero)
    /// The body of each answer (a bot's answer to a command); none when nil.
    let answerBody = Mutex<String?>(nil)
    private let requests = Mutex<[Received]>([])
    private let server = Mutex<LoopbackHTTPServer?>(nil)

    var url: String { server.withLock { "\($0?.baseURL ?? "")/hook" } }
    var received: [Received] { requests.withLock { $0 } }
    /// The requests answered 2xx, in the order they came.
    private let accepted = Mutex<[Received]>([])
    var delivered: [Received] { accepted.withLock { $0 } }

    static func start() async throws -> WebhookReceiver {
        let receiver = WebhookReceiver()
        try await receiver.listen(port: 0)
        return receiver
    }

    private func listen(port: Int) async throws {
        let router = Router()
        router.post("hook") { [self] request, _ in try await answer(request) }
        let server = try await LoopbackHTTPServer.start(router, port: port)
        self.server.withLock { $0 = server }
    }

    func stop() async { await server.withLock { $0 }?.stop() }

    /// Down: nothing listens (connections are refused) until ``comeBack()``.
    func goDown() async { await stop() }

    /// Listens again on the same port (so at the same URL).
    func comeBack() async throws {
        guard let port = server.withLock({ $0?.port }) else { return }
        try await listen(port: port)
    }

    private func answer(_ request: Hummingbird.Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        let received = Received(request, body: body)
        requests.withLock { $0.append(received) }
        let (status, delay) = (self.status.withLock { $0 }, self.delay.withLock { $0 })
        if delay > .zero { try await Task.sleep(for: delay) }
        if (200..<300).contains(status) { accepted.withLock { $0.append(received) } }
        guard let answer = answerBody.withLock({ $0 }) else { return Response(status: .init(code: status)) }
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    /// Waits until `done` holds of what was delivered, up to `limit`.
    func wait(within limit: Duration = .seconds(20), until done: ([Received]) -> Bool) async -> [Received] {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let now = delivered
            if done(now) { return now }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return delivered
    }
}
