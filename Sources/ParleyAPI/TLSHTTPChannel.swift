import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL

/// The TLS listener: HTTP/2 or HTTP/1.1 as ALPN chooses, like Hummingbird's
/// `HTTP2UpgradeChannel`, with each decrypted read handed on in a buffer of its own size
/// (``RightSizedReads``), so an idle connection holds no more than its TLS session needs, and
/// HTTP/2's streams answered by Parley's own stream path (``HTTP2Streams``).
/// Its reads and its wait for a closing client are bounded (``boundReads(of:)``,
/// ``closeNotifyWait``; <doc:HostileInput>).
public struct TLSHTTPChannel: HTTPChannelHandler {
    /// How long a connection `serve` closes waits for the client's close_notify (NIOSSL's
    /// default is 5 s). NIOSSL holds the closed connection, buffers and all, until the wait runs
    /// out even when the client has gone; TLS does not ask a server to wait at all, and the
    /// second is for a client still reading the last of what `serve` wrote.
    static let closeNotifyWait = TimeAmount.seconds(1)
    /// Reads of at most 16 KiB, one per event-loop turn: NIOSSL decrypts what a turn read into
    /// one buffer that never shrinks (NIO's default, four reads of up to 64 KiB, grew it to
    /// 256–512 KiB for the rest of the connection after one upload or flood).
    static func boundReads(of channel: any Channel) throws {
        try channel.syncOptions?.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
        try channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16_384))
    }

    private let context: NIOSSLContext
    private let choice: HTTPVersionChoice
    public var responder: Responder { choice.http1.responder }

    init(
        tlsConfiguration: TLSConfiguration, responder: @escaping Responder, router: RouterResponder,
        http1: HTTP1Channel.Configuration, http2: HTTP2ChannelConfiguration
    ) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        tlsConfiguration.shutdownTimeout = Self.closeNotifyWait
        context = try NIOSSLContext(configuration: tlsConfiguration)
        choice = HTTPVersionChoice(responder: responder, router: router, http1: http1, http2: http2)
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<NegotiatedHTTPConnection> {
        channel.eventLoop.makeCompletedFuture {
            let negotiation = choice.negotiation(channel: channel, logger: logger)
            try Self.boundReads(of: channel)
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(NIOSSLServerHandler(context: context))
            try operations.addHandler(RightSizedReads())
            try operations.addHandler(negotiation)
            return NegotiatedHTTPConnection(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    public func handle(value: NegotiatedHTTPConnection, logger: Logger) async {
        await choice.handle(value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/2 and HTTP/1.1 over TLS, chosen by ALPN; HTTP/2's streams answered by `router`.
    static func tls(
        _ tlsConfiguration: TLSConfiguration, router: RouterResponder, http1: HTTP1Channel.Configuration,
        http2: HTTP2ChannelConfiguration
    ) throws -> HTTPServerBuilder {
        .init { responder in
            try TLSHTTPChannel(
                tlsConfiguration: tlsConfiguration, responder: responder, router: router, http1: http1, http2: http2)
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
