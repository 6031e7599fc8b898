import NIOCore
import NIOHTTP1
import NIOWebSocket

/// MQTT over WebSocket (MQTT 5, section 6): an HTTP/1.1 upgrade with subprotocol `mqtt`, then
/// the MQTT byte stream in binary frames, masked as a client's must be.
enum WebSocketTransport {
    /// Adds the HTTP client and its upgrade to `channel`; `upgraded` runs on the upgraded
    /// channel (to add the MQTT handlers), and `ready` completes once it has, or fails if the
    /// broker refuses.
    static func configure(
        _ channel: any Channel, host: String, path: String, ready: EventLoopPromise<Void>,
        upgraded: @escaping @Sendable (any Channel) throws -> Void
    ) throws {
        let request = UpgradeRequest(host: host, path: path, ready: ready)
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 20) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                // The frame handlers went in after the request's handler: it goes before any
                // frame arrives (bytes that came with the 101 are forwarded once this returns).
                let operations = channel.pipeline.syncOperations
                operations.removeHandler(name: UpgradeRequest.name, promise: nil)
                try operations.addHandler(WebSocketByteStream())
                try upgraded(channel)
            }.map { ready.succeed() }
        }
        let operations = channel.pipeline.syncOperations
        try operations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try operations.addHandler(request, name: UpgradeRequest.name)
    }
}

/// Sends the upgrade request once connected; sees the answer only if the upgrade failed.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    static let name = "parley-mqtt-websocket-upgrade-request"

    private let host: String
    private let path: String
    private let ready: EventLoopPromise<Void>

    init(host: String, path: String, ready: EventLoopPromise<Void>) {
        self.host = host
        self.path = path
        self.ready = ready
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Sec-WebSocket-Protocol", value: "mqtt")
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let response) = unwrapInboundIn(data) {
            ready.fail(MQTTEndpointError.webSocketRefused(response.status.code))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        context.close(promise: nil)
    }
}

/// WebSocket frames to the MQTT byte stream and back.
final class WebSocketByteStream: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .continuation:
            // An MQTT packet may span frames and a frame may hold several: the decoder reassembles.
            context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break  // pongs, and text frames, which MQTT does not use
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: unwrapOutboundIn(data))
        context.write(wrapOutboundOut(frame), promise: promise)
    }
}
