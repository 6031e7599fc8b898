import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Writes an answer to its HTTP/2 stream's channel.
///
/// An answer whose body is one buffer (every JSON answer) leaves in one flush: its head, body
/// and end in one TLS record. The first buffer is held until the body ends or a second one
/// comes; a longer body (a download) is then written a part at a time, each awaited, so a slow
/// client holds the reader back through HTTP/2's flow control.
struct HTTP2ResponseWriter: ResponseBodyWriter {
    private let channel: any Channel
    /// What is held for the first flush: the head, and the body's first buffer.
    private var unsent: [HTTPResponsePart]

    private init(channel: any Channel, head: HTTPResponse) {
        self.channel = channel
        self.unsent = [.head(head)]
    }

    /// Writes `response` to `channel`; a failed write (the client reset the stream) closes it.
    static func write(_ response: Response, to channel: any Channel) async {
        let writer = HTTP2ResponseWriter(channel: channel, head: response.head)
        do {
            try await response.body.write(writer)
        } catch {
            channel.close(promise: nil)
        }
    }

    mutating func write(_ buffer: ByteBuffer) async throws {
        if unsent.count == 1 {
            unsent.append(.body(buffer))
            return
        }
        let parts = unsent + [.body(buffer)]
        unsent = []
        try await send(parts).get()
    }

    /// The end is not awaited: nothing follows it, and a client that reset the stream meanwhile
    /// needs no answer.
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        _ = send(unsent + [.end(trailingHeaders)])
    }

    /// Writes `parts` with one flush, on the channel's event loop.
    private func send(_ parts: [HTTPResponsePart]) -> EventLoopFuture<Void> {
        let channel = channel
        guard channel.eventLoop.inEventLoop else {
            return channel.eventLoop.flatSubmit { Self.write(parts, to: channel) }
        }
        return Self.write(parts, to: channel)
    }

    private static func write(_ parts: [HTTPResponsePart], to channel: any Channel) -> EventLoopFuture<Void> {
        for part in parts.dropLast() { channel.write(part, promise: nil) }
        return channel.writeAndFlush(parts[parts.count - 1])
    }
}
