import NIOCore

/// Flushes what the HTTP/2 handler has written before its connection's close passes.
///
/// In a graceful shutdown NIO's HTTP/2 connection management handler closes the connection when
/// its last stream closes, and NIO's HTTP/2 handler reports that close while writing the
/// stream's last frame, before it flushes: every frame of that answer still unflushed would be
/// dropped with the socket. Placed below the HTTP/2 handler, this sends them first, so a
/// request in flight when `parley serve` is told to stop is answered whole.
final class FlushBeforeClose: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode != .input { context.flush() }
        context.close(mode: mode, promise: promise)
    }
}
