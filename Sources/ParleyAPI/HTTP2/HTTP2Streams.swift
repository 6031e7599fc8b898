import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypesHTTP2

/// An HTTP/2 connection whose streams are answered by ``HTTP2StreamResponder``: Hummingbird's
/// `HTTP2Channel` without an async channel and a task group member per stream (see
/// <doc:LeanHTTP2Streams>).
///
/// NIO's `NIOHTTP2ServerConnectionManagementHandler` keeps the connection's lifecycle as
/// Hummingbird's own manager did: closed after its idle timeout with no stream open, after its
/// maximum age, and on a graceful shutdown (two GOAWAYs, then closed when the last stream
/// closes, or forcibly after the grace period).
struct HTTP2Streams: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let responder: RouterResponder
    let configuration: HTTP2ChannelConfiguration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let manager = NIOHTTP2ServerConnectionManagementHandler(
                eventLoop: channel.eventLoop,
                configuration: .init(
                    maxIdleTime: configuration.idleTimeout.map(TimeAmount.init),
                    maxAge: configuration.maxAgeTimeout.map(TimeAmount.init),
                    maxGraceTime: configuration.gracefulCloseTimeout.map(TimeAmount.init), keepalive: nil))
            let (responder, idleTimeout) = (responder, streamIdleTimeout)
            _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                mode: .server, connectionConfiguration: .init(), streamConfiguration: .init(),
                streamDelegate: manager.http2StreamDelegate
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(EndStreamOnLastFrame())
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                    try stream.pipeline.syncOperations.addHandler(
                        HTTP2StreamResponder(responder: responder, idleTimeout: idleTimeout))
                }
            }
            try channel.pipeline.syncOperations.addHandler(manager)
            return Value(channel: channel)
        }
    }

    /// The streams answer themselves; the connection's task lasts as long as the connection.
    func handle(value: Value, logger: Logger) async {
        let channel = value.channel
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// A stream's request must keep arriving: the listeners' idle timeout, or a minute.
    private var streamIdleTimeout: TimeAmount {
        configuration.streamConfiguration.idleTimeout ?? .seconds(60)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        self = .nanoseconds(Int64(duration / .nanoseconds(1)))
    }
}
