import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import ParleyCore

/// Answers a request NIO's HTTP/1.1 parser refuses (an oversized URL or header, both
/// `Content-Length` and `Transfer-Encoding`, a NUL in the path) with problem+json, as every
/// other error: left alone, Hummingbird answers it with an empty 400.
///
/// It sits right after HTTP part decoding and sees the parser's error first. After its answer
/// it closes only its side: the rest of the bytes cannot be trusted to frame requests, and a
/// full close with unread input would reset the connection and could destroy the answer.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A response already begun cannot be followed by another.
    private var responding = false

    static let body = ByteBuffer(
        bytes: ProblemDetails(
            status: .badRequest, code: ParleyError.Code.invalidRequest.rawValue,
            detail: "The request is not well-formed HTTP/1.1."
        ).encoded())

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !responding {
            let head = HTTPResponse(
                status: .badRequest,
                headerFields: [
                    .contentType: "application/problem+json", .contentLength: String(Self.body.readableBytes),
                    .connection: "close",
                ])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(Self.body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(mode: .output, promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational: responding = true
        case .end: responding = false
        default: break
        }
        context.write(data, promise: promise)
    }
}
