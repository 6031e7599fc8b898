import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleyOutbound
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAPI

/// The message hook with a real receiver on loopback: asked before a message is stored, signed
/// as webhooks are, and its three answers and its failures applied.
struct MessageHookTests {
    /// The app's backend: rejects what says "forbidden", replaces what says "replace me", allows
    /// the rest; answers after `delay`.
    final class Backend: Sendable {
        /// Each request's body, as sent.
        let asked = Mutex<[String]>([])
        let signed = Mutex<[WebhookReceiver.Received]>([])
        let delay = Mutex(Duration.zero)
        private let server = Mutex<LoopbackHTTPServer?>(nil)
        var url: String { server.withLock { "\($0?.baseURL ?? "")/hook" } }
        /// Each request as the backend reads it.
        var requests: [Asked] {
            asked.withLock { $0 }.compactMap { try? JSONDecoder().decode(Asked.self, from: Data($0.utf8)) }
        }

        static func start() async throws -> Backend {
            let backend = Backend()
            let router = Router()
            router.post("hook") { [backend] request, _ in try await backend.answer(request) }
            let server = try await LoopbackHTTPServer.start(router)
            backend.server.withLock { $0 = server }
            return backend
        }

        func stop() async { await server.withLock { $0 }?.stop() }

        private func answer(_ request: Request) async throws -> Response {
            let body = try await request.body.collect(upTo: 1 << 20)
            let asked = try JSONDecoder().decode(Asked.self, from: Data(body.readableBytesView))
            self.asked.withLock { $0.append(String(buffer: body)) }
            signed.withLock { $0.append(WebhookReceiver.Received(request, body: body)) }
            let delay = self.delay.withLock { $0 }
            if delay > .zero { try await Task.sleep(for: delay) }
            let results = asked.messages.map { message in
                if message.content.contains("forbidden") { return #"{"action":"reject","reason":"Not in this app."}"# }
                if message.content.contains("replace me") {
                    return #"{"action":"replace","content":"[replaced]","metadata":{"moderated":true}}"#
                }
                return #"{"action":"allow"}"#
            }
            let answer = Data(#"{"results":[\#(results.joined(separator: ","))]}"#.utf8)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(data: answer)))
        }
    }

    /// What the hook is asked, as the backend reads it.
    struct Asked: Decodable {
        struct Message: Decodable {
            let uid: String
            let chatRoomId: Int
            let sentById: Int?
            let content: String
            let type: String
            let metadata: MessageMetadata?
            let edit: Bool
        }

        let messages: [Message]
    }

    static let loopback = OutboundRule(allowHTTP: true, allowed: [AddressRange("127.0.0.0/8")!])

    func withHook(
        failure: MessageHookGate.Failure = .allow, timeout: Duration = .milliseconds(300),
        _ body: @escaping @Sendable (any TestClientProtocol, Backend, String) async throws -> Void
    ) async throws {
        let backend = try await Backend.start()
        let (key, secret) = WebhookSignature.generate()
        let client = OutboundHTTPClient(rule: Self.loopback, resolver: SystemAddressResolver())
        var harness = try await APIHarness.make()
        harness.messageHook = MessageHookGate(
            hook: HTTPMessageHook(
                url: backend.url, signature: WebhookSignature(key: key), timeout: timeout, client: client),
            failure: failure)
        try await harness.run { api in try await body(api, backend, secret) }
        try await client.shutdown()
        await backend.stop()
    }

    @Test func theHooksAnswersAllowRejectAndReplaceMessagesAndEdits() async throws {
        try await withHook { client, backend, _ in
            let (roomID, users) = try await client.roomOfThree()
            let allowed = try await client.send("hello", uid: "h-1", to: roomID, as: users[1])
            #expect(allowed.content == "hello")
            let rejected = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(users[1]),
                body: #"{"content":"something forbidden","uid":"h-2"}"#)
            #expect(rejected.status.code == 422 && rejected.problem?.code == "rejected-by-policy", "\(rejected.text)")
            #expect(rejected.problem?.detail == "Not in this app.")
            let replaced = try await client.send("please replace me", uid: "h-3", to: roomID, as: users[1])
            #expect(replaced.content == "[replaced]" && replaced.metadata?.members == ["moderated": .bool(true)])
            // What the hook was asked, in the contract's shape.
            let asked = try #require(backend.requests.last?.messages)
            #expect(asked.count == 1)
            let message = try #require(asked.first)
            #expect(message.uid == "h-3" && message.chatRoomId == roomID)
            #expect(message.sentById == Int(users[1].user.id) && !message.edit)
            #expect(message.type == "text" && message.metadata == nil)
            #expect(try #require(backend.signed.withLock { $0.last }).body.contains(#""metadata":null"#))
            // History holds no trace of the rejected one.
            let history = try await client.history(roomID, as: users[0]).messages.map(\.uid)
            #expect(history == ["first", "h-1", "h-3"])
            // Edits too, marked as edits.
            let refusedEdit = try await client.json(
                .patch, "/v1/rooms/\(roomID)/messages/\(allowed.id)", token: token(users[1]),
                body: #"{"content":"now forbidden"}"#)
            #expect(refusedEdit.status.code == 422 && refusedEdit.problem?.code == "rejected-by-policy")
            let replacedEdit = try await client.json(
                .patch, "/v1/rooms/\(roomID)/messages/\(allowed.id)", token: token(users[1]),
                body: #"{"content":"replace me now"}"#)
            #expect(replacedEdit.status == .ok && replacedEdit.json["content"] as? String == "[replaced]")
            let edit = try #require(backend.requests.last?.messages.first)
            #expect(edit.edit && edit.uid == "h-1")
        }
    }

    @Test func theHookIsSignedAsWebhooksAre() async throws {
        try await withHook { client, backend, secret in
            let (roomID, users) = try await client.roomOfThree()
            _ = try await client.send("signed", uid: "s-1", to: roomID, as: users[1])
            let received = try #require(backend.signed.withLock { $0.last })
            #expect(WebhookDeliveryTests.verifies(received, secret: secret))
            #expect(!WebhookDeliveryTests.verifies(received, secret: WebhookSignature.generate().secret))
        }
    }

    @Test(arguments: [MessageHookGate.Failure.allow, .reject])
    func aHookThatDoesNotAnswerInTimeFailsAsConfigured(_ failure: MessageHookGate.Failure) async throws {
        try await withHook(failure: failure, timeout: .milliseconds(300)) { client, backend, _ in
            let (roomID, users) = try await client.roomOfThree()
            backend.delay.withLock { $0 = .seconds(5) }
            let started = ContinuousClock.now
            let answer = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(users[1]),
                body: #"{"content":"slow hook","uid":"t-1"}"#)
            // Answered at the hook's time limit, not the backend's 5 s.
            #expect(ContinuousClock.now - started < .seconds(4))
            switch failure {
            case .allow: #expect(answer.status == .created, "\(answer.text)")
            case .reject:
                #expect(answer.status.code == 422 && answer.problem?.code == "rejected-by-policy", "\(answer.text)")
            }
        }
    }
}
