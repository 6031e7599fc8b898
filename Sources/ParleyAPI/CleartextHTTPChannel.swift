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
    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>>
        public let channel: any Channel
    }

    private let http1: HTTP1Channel
    private let http2: HTTP2Channel
    public var responder: Responder { http1.responder }

    public init(responder: @escaping Responder, configuration: HTTP2ChannelConfiguration = .init()) {
        self.http1 = HTTP1Channel(responder: responder, configuration: configuration.streamConfiguration)
        self.http2 = HTTP2Channel(responder: responder, configuration: configuration)
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            typealias Negotiated = NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
                if case .negotiated("h2") = result {
                    return http2.setup(channel: channel, logger: logger).map { .http2($0) }
                }
                return http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
            }
            try channel.pipeline.syncOperations.addHandler(HTTP2PrefaceSniffer(timeout: .seconds(10)))
            try channel.pipeline.syncOperations.addHandler(negotiation)
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("cleartext connection failed before a protocol was chosen", metadata: ["error": "\(error)"])
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 and h2c with prior knowledge on one cleartext port.
    public static func cleartextHTTP1AndH2C(configuration: HTTP2ChannelConfiguration = .init()) -> HTTPServerBuilder {
        .init { responder in CleartextHTTPChannel(responder: responder, configuration: configuration) }
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
