import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// The TLS listener: HTTP/2 or HTTP/1.1 as ALPN chooses, like Hummingbird's
/// `HTTP2UpgradeChannel`, with each decrypted read handed on in a buffer of its own size
/// (``RightSizedReads``), so an idle connection holds no more than its TLS session needs.
public struct TLSHTTPChannel: HTTPChannelHandler {
    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>>
        public let channel: any Channel
    }

    private let context: NIOSSLContext
    private let http1: HTTP1Channel
    private let http2: HTTP2Channel
    public var responder: Responder { http1.responder }

    public init(
        tlsConfiguration: TLSConfiguration, responder: @escaping Responder,
        configuration: HTTP2ChannelConfiguration = .init()
    ) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        self.context = try NIOSSLContext(configuration: tlsConfiguration)
        self.http1 = HTTP1Channel(responder: responder, configuration: configuration.streamConfiguration)
        self.http2 = HTTP2Channel(responder: responder, configuration: configuration)
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            typealias Negotiated = NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
                switch result {
                case .negotiated("h2"):
                    return http2.setup(channel: channel, logger: logger).map { .http2($0) }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
                case .negotiated:
                    return channel.close().flatMapThrowing { throw NIOHTTP2Errors.invalidALPNToken() }
                }
            }
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(NIOSSLServerHandler(context: context))
            try operations.addHandler(RightSizedReads())
            try operations.addHandler(negotiation)
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
            logger.debug("TLS connection failed before a protocol was chosen", metadata: ["error": "\(error)"])
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/2 and HTTP/1.1 over TLS, chosen by ALPN.
    public static func tls(
        _ tlsConfiguration: TLSConfiguration, configuration: HTTP2ChannelConfiguration = .init()
    ) throws -> HTTPServerBuilder {
        .init { responder in
            try TLSHTTPChannel(tlsConfiguration: tlsConfiguration, responder: responder, configuration: configuration)
        }
    }
}

/// Hands each read on in a buffer of exactly its size.
///
/// NIOSSL decrypts into one 32 KiB buffer per connection and passes it on; the HTTP/2 frame
/// parser keeps the read's (empty) remainder, which shares that storage, so every next read
/// copies NIOSSL's buffer into a fresh 32 KiB one and each idle connection holds two. A copy
/// of just the bytes read leaves NIOSSL's buffer to NIOSSL alone. See <doc:IdleConnectionMemory>.
final class RightSizedReads: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let read = unwrapInboundIn(data)
        var copy = context.channel.allocator.buffer(capacity: read.readableBytes)
        copy.writeImmutableBuffer(read)
        context.fireChannelRead(wrapInboundOut(copy))
    }
}
