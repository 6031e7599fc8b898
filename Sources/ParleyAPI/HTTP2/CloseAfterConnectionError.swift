import NIOCore

/// Closes an HTTP/2 connection once NIO's HTTP/2 handler has written a GOAWAY for an error.
///
/// On a connection error (a header block past its limit, a flood of CONTINUATION frames, a
/// broken frame) NIO's handler writes a GOAWAY, stops parsing and reports the error, leaving
/// the close to the pipeline; RFC 9113 §5.4.1 says the endpoint MUST then close the connection.
/// Left open, every byte the peer went on sending gathered unparsed in the frame decoder: one
/// client took `parley serve` from 57 MiB to 1.6 GiB in three seconds of CONTINUATION frames.
/// A stream's error is a RST_STREAM and leaves the connection open; a graceful shutdown's GOAWAY
/// carries NO_ERROR and is the connection manager's to finish. Placed below the HTTP/2 handler,
/// which writes each frame it sends in a write of its own, this sees the GOAWAY as its bytes.
final class CloseAfterConnectionError: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var closing = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closing, case .byteBuffer(let bytes) = unwrapOutboundIn(data), Self.isErrorGoAway(bytes) else {
            context.write(data, promise: promise)
            return
        }
        closing = true
        context.writeAndFlush(data, promise: promise)
        context.close(promise: nil)
    }

    /// Whether `bytes` begin with a GOAWAY frame whose error code is not NO_ERROR: the 9-byte
    /// frame header (type 0x7), then the last stream id and the 32-bit error code.
    static func isErrorGoAway(_ bytes: ByteBuffer) -> Bool {
        let start = bytes.readerIndex
        guard bytes.readableBytes >= 17, bytes.getInteger(at: start + 3, as: UInt8.self) == 0x7,
            let code = bytes.getInteger(at: start + 13, as: UInt32.self)
        else { return false }
        return code != 0
    }
}
