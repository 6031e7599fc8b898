import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Answers the request of one HTTP/2 stream: reads it on the stream's channel, runs the
/// router in a task of its own and writes the answer back (see <doc:LeanHTTP2Streams>).
///
/// A body up to ``gatherLimit`` is read whole before the router runs (every JSON request);
/// a larger one is streamed to it as it arrives, its reads held while the router is behind.
/// A stream whose request stops arriving for the idle timeout is closed (slowloris).
final class HTTP2StreamResponder: ChannelDuplexHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Bodies up to this size are read whole before the router runs.
    static let gatherLimit = 64 * 1024

    private enum Reading {
        case head
        case gathering(HTTPRequest, ByteBuffer?)
        case streaming(StreamedRequestBody)
        case done

        /// Whether more of the request is still to come.
        var awaitsMore: Bool {
            switch self {
            case .gathering, .streaming: true
            case .head, .done: false
            }
        }
    }

    private var reading = Reading.head
    private let responder: RouterResponder
    private let idleTimeout: TimeAmount
    private let gate = ReadGate()
    private var lastRead = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?

    init(responder: RouterResponder, idleTimeout: TimeAmount) {
        self.responder = responder
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) { gate.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        gate.context = nil
        stopReading(failure: ChannelError.ioOnClosedChannel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopReading(failure: ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        stopReading(failure: error)
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) { gate.read(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        switch (reading, unwrapInboundIn(data)) {
        case (.head, .head(let head)):
            reading = .gathering(head, nil)
        case (.gathering(let head, let gathered), .body(var part)):
            guard var gathered else {
                reading = .gathering(head, part)
                return gatherOrStream(head, context: context)
            }
            gathered.writeBuffer(&part)
            reading = .gathering(head, gathered)
            gatherOrStream(head, context: context)
        case (.gathering(let head, let gathered), .end):
            reading = .done
            idleCheck?.cancel()
            answer(head, body: RequestBody(buffer: gathered ?? ByteBuffer()), context: context)
        case (.streaming(let body), .body(let part)):
            body.yield(part)
        case (.streaming(let body), .end):
            reading = .done
            idleCheck?.cancel()
            body.finish()
        default:  // a part out of order; NIO's HTTP/2 state machine lets none through
            context.close(promise: nil)
        }
    }

    /// Keeps an unfinished request to its idle timeout, checked after each batch of reads.
    func channelReadComplete(context: ChannelHandlerContext) {
        if idleCheck == nil, reading.awaitsMore { scheduleIdleCheck(context: context) }
        context.fireChannelReadComplete()
    }

    /// Starts streaming once the gathered body passes ``gatherLimit``.
    private func gatherOrStream(_ head: HTTPRequest, context: ChannelHandlerContext) {
        guard case .gathering(_, let gathered?) = reading, gathered.readableBytes > Self.gatherLimit else { return }
        let body = StreamedRequestBody(gate: gate, eventLoop: context.eventLoop)
        body.yield(gathered)
        reading = .streaming(body)
        answer(head, body: body.body, context: context)
    }

    private func answer(_ head: HTTPRequest, body: RequestBody, context: ChannelHandlerContext) {
        let request = Request(head: head, body: body)
        let (responder, channel) = (responder, context.channel)
        Task { await HTTP2ResponseWriter.write(await responder.response(to: request, channel: channel), to: channel) }
    }

    private func scheduleIdleCheck(context: ChannelHandlerContext) {
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastRead + idleTimeout) {
            self.idleCheck = nil
            guard self.reading.awaitsMore else { return }
            if self.gate.isHolding || NIODeadline.now() < self.lastRead + self.idleTimeout {
                self.scheduleIdleCheck(context: context)
            } else {
                context.close(promise: nil)
            }
        }
    }

    private func stopReading(failure: any Error) {
        idleCheck?.cancel()
        idleCheck = nil
        if case .streaming(let body) = reading { body.finish(failure) }
        reading = .done
    }
}
