import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOTLS

/// A cleartext listener that serves HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on one port.
///
/// Without TLS there is no ALPN, so the first bytes decide: a connection that opens with the
/// HTTP/2 connection preface gets HTTP/2, anything else HTTP/1.1. The decision is handed to
/// NIO's protocol negotiation handler as if ALPN had made it, reusing its pipeline switch.
public struct CleartextHTTPChannel: HTTPChannelHandler {
    private let choice: HTTPVersionChoice
    public var responder: Responder { choice.http1.responder }

    init(
        responder: @escaping Responder, router: RouterResponder, http1: HTTP1Channel.Configuration,
        http2: HTTP2ChannelConfiguration
    ) {
        choice = HTTPVersionChoice(responder: responder, router: router, http1: http1, http2: http2)
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<NegotiatedHTTPConnection> {
        channel.eventLoop.makeCompletedFuture {
            let negotiation = choice.negotiation(channel: channel, logger: logger)
            try channel.pipeline.syncOperations.addHandler(HTTP2PrefaceSniffer(timeout: .seconds(10)))
            try channel.pipeline.syncOperations.addHandler(negotiation)
            return NegotiatedHTTPConnection(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    public func handle(value: NegotiatedHTTPConnection, logger: Logger) async {
        await choice.handle(value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 and h2c with prior knowledge on one cleartext port; HTTP/2's streams answered
    /// by `router`.
    static func cleartextHTTP1AndH2C(
        router: RouterResponder, http1: HTTP1Channel.Configuration, http2: HTTP2ChannelConfiguration
    ) -> HTTPServerBuilder {
        .init { responder in CleartextHTTPChannel(responder: responder, router: router, http1: http1, http2: http2) }
    }
}

/// Reads just enough of a new connection to tell the HTTP/2 preface from an HTTP/1 request.
final class HTTP2PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    private var buffered: ByteBuffer?
    /// HTTP's own idle timeouts start after the choice: a client that sends nothing (or a
    /// never-finished preface) is closed here instead of holding its socket forever.
    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if buffered == nil {
            buffered = incoming
        } else {
            buffered!.writeBuffer(&incoming)
        }
        let bytes = buffered!.readableBytesView
        let compared = min(bytes.count, Self.preface.count)
        let matches = bytes.prefix(compared).elementsEqual(Self.preface.prefix(compared))
        if matches && compared < Self.preface.count { return }  // undecided: wait for more bytes

        let chosen = matches ? "h2" : "http/1.1"
        context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: chosen))
        let data = buffered!
        buffered = nil
        context.fireChannelRead(wrapInboundOut(data))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
