import NIOCore
import NIOHTTP2

/// Ends an answer's stream on its last frame: an answer's body and its end leave as one DATA
/// frame with END_STREAM, an answer without a body as one HEADERS frame with END_STREAM.
///
/// NIO's HTTP/2 codec ends every answer with an empty DATA frame of its own. A client built
/// on NIO (AsyncHTTPClient: ParleyKit's transport off Apple's platforms, and the benchmark's)
/// then sees its stream still open after the body and sends a WINDOW_UPDATE for it, its own
/// flush and TLS record: a second wake-up of `serve` for every request (see
/// <doc:LeanHTTP2Streams>). With the end on the
/// last frame the stream is closed when its body arrives, and nothing follows.
///
/// A frame that could carry the end is held until the stream's next write or flush; a stream
/// channel sends nothing before its flush, so holding it delays nothing.
final class EndStreamOnLastFrame: ChannelOutboundHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var held: (payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        if let held = held.take() {
            if Self.isBareEnd(payload), let ended = Self.ending(held.payload) {
                context.write(wrapOutboundOut(ended), promise: Self.joined(held.promise, promise))
                return
            }
            context.write(wrapOutboundOut(held.payload), promise: held.promise)
        }
        if Self.ending(payload) != nil {
            held = (payload, promise)
        } else {
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        if let held = held.take() { context.write(wrapOutboundOut(held.payload), promise: held.promise) }
        context.flush()
    }

    /// A stream closed before its flush sends nothing of what it held.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        held.take()?.promise?.fail(ChannelError.ioOnClosedChannel)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        held.take()?.promise?.fail(ChannelError.ioOnClosedChannel)
    }

    /// The codec's end of an answer: an empty DATA frame with END_STREAM and no padding.
    private static func isBareEnd(_ payload: HTTP2Frame.FramePayload) -> Bool {
        guard case .data(let data) = payload else { return false }
        return data.endStream && data.data.readableBytes == 0 && data.paddingBytes == nil
    }

    /// `payload` carrying END_STREAM, when it is a frame that can and does not yet.
    private static func ending(_ payload: HTTP2Frame.FramePayload) -> HTTP2Frame.FramePayload? {
        switch payload {
        case .data(var data) where !data.endStream:
            data.endStream = true
            return .data(data)
        case .headers(var headers) where !headers.endStream && !isInformational(headers):
            headers.endStream = true
            return .headers(headers)
        default:
            return nil
        }
    }

    /// A 1xx answer comes before the final one and cannot end the stream.
    private static func isInformational(_ headers: HTTP2Frame.FramePayload.Headers) -> Bool {
        headers.headers.first(name: ":status")?.first == "1"
    }

    /// One promise for the frame that now carries two writes.
    private static func joined(_ first: EventLoopPromise<Void>?, _ second: EventLoopPromise<Void>?)
        -> EventLoopPromise<Void>?
    {
        guard let first else { return second }
        if let second { first.futureResult.cascade(to: second) }
        return first
    }
}
