import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAPI

/// An answer with its body in hand leaves in one flush, after every middleware of the public
/// router: over HTTP/2 that is one TLS record and one socket write for its HEADERS and DATA,
/// where a body wrapped in a closure (as Hummingbird's own metrics middleware does) costs three.
struct ResponseWriteTests {
    @Test func anAnswerIsFlushedOnceWithItsHeadBodyAndEnd() async throws {
        let channel = NIOAsyncTestingChannel()
        let flushes = FlushCounter()
        try await channel.pipeline.addHandler(flushes)
        let asyncChannel = try await channel.testingEventLoop.executeInContext {
            try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(wrappingChannelSynchronously: channel)
        }
        let responder = ParleyRoutes.forTesting(probes: []).publicRouter().buildResponder()
        let request = Request(
            head: HTTPRequest(method: .get, scheme: "https", authority: "localhost", path: "/health/live"),
            body: RequestBody(buffer: ByteBuffer()))
        var logger = Logger(label: "test")
        logger[metadataKey: "hb.request.id"] = "1"  // as Hummingbird's server sets it
        let context = ParleyRequestContext(source: .init(channel: channel, logger: logger))
        let response = try await responder.respond(to: request, context: context)
        try await asyncChannel.executeThenClose { _, outbound in
            try await ResponseWriter(outbound: outbound).write(response: response.head, body: response.body)
        }

        #expect(flushes.count == 1)
        var parts: [HTTPResponsePart] = []
        while let part = try await channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
        guard parts.count == 3, case .head(let head) = parts[0], case .body(let body) = parts[1], case .end = parts[2]
        else {
            Issue.record("expected a head, a body and an end, got \(parts)")
            return
        }
        #expect(head.status == .ok)
        #expect(String(buffer: body) == #"{"status":"live"}"#)
    }
}

extension ResponseWriteTests {
    /// The same over Parley's HTTP/2 stream path: the router's answer leaves the stream's
    /// handler in one flush.
    @Test func anHTTP2StreamsAnswerIsFlushedOnceWithItsHeadBodyAndEnd() async throws {
        let channel = NIOAsyncTestingChannel()
        let flushes = FlushCounter()
        try await channel.pipeline.addHandler(flushes)
        let router = RouterResponder(
            ParleyRoutes.forTesting(probes: []).publicRouter().buildResponder(), serverName: "Parley", logger: .quiet)
        try await channel.testingEventLoop.executeInContext {
            try channel.pipeline.syncOperations.addHandler(
                HTTP2StreamResponder(responder: router, idleTimeout: .seconds(60)))
        }
        let head = HTTPRequest(method: .get, scheme: "https", authority: "localhost", path: "/health/live")
        try await channel.writeInbound(HTTPRequestPart.head(head))
        try await channel.writeInbound(HTTPRequestPart.end(nil))

        var parts: [HTTPResponsePart] = []
        for _ in 0..<500 where parts.count < 3 {
            if let part = try await channel.readOutbound(as: HTTPResponsePart.self) {
                parts.append(part)
            } else {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(flushes.count == 1)
        guard parts.count == 3, case .head(let answer) = parts[0], case .body(let body) = parts[1], case .end = parts[2]
        else {
            Issue.record("expected a head, a body and an end, got \(parts)")
            return
        }
        #expect(answer.status == .ok)
        #expect(String(buffer: body) == #"{"status":"live"}"#)
    }
}

/// Counts the flushes that reach the channel.
private final class FlushCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    private let flushes = Atomic(0)

    var count: Int { flushes.load(ordering: .relaxed) }

    func flush(context: ChannelHandlerContext) {
        flushes.add(1, ordering: .relaxed)
        context.flush()
    }
}
