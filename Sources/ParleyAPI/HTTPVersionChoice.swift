import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOTLS

/// Hummingbird's HTTP/1.1 channel and Parley's HTTP/2 streams (``HTTP2Streams``) behind one
/// protocol choice, for both public listeners: over TLS, ALPN chooses; in cleartext, the
/// connection's first bytes do.
struct HTTPVersionChoice: Sendable {
    typealias Negotiated = NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Streams.Value>

    let http1: HTTP1Channel
    let http2: HTTP2Streams

    init(
        responder: @escaping HTTPChannelHandler.Responder, router: RouterResponder,
        http1: HTTP1Channel.Configuration, http2: HTTP2ChannelConfiguration
    ) {
        self.http1 = HTTP1Channel(responder: responder, configuration: http1)
        self.http2 = HTTP2Streams(responder: router, configuration: http2)
    }

    /// NIO's negotiation handler, which sets up the chosen protocol's pipeline on `channel`.
    func negotiation(channel: any Channel, logger: Logger) -> NIOTypedApplicationProtocolNegotiationHandler<Negotiated>
    {
        NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
            switch result {
            case .negotiated("h2"):
                do {
                    try channel.pipeline.syncOperations.addHandlers(FlushBeforeClose(), CloseAfterConnectionError())
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return http2.setup(channel: channel, logger: logger).map { .http2($0) }
            case .negotiated("http/1.1"), .fallback:
                return http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
            case .negotiated:
                return channel.close().flatMapThrowing { throw NIOHTTP2Errors.invalidALPNToken() }
            }
        }
    }

    /// Serves the connection in the protocol chosen.
    func handle(_ connection: NegotiatedHTTPConnection, logger: Logger) async {
        do {
            switch try await connection.negotiated.get() {
            case .http1_1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("connection failed before a protocol was chosen", metadata: ["error": "\(error)"])
        }
    }
}

/// A public listener's connection, its protocol still being chosen.
public struct NegotiatedHTTPConnection: ServerChildChannelValue {
    let negotiated: EventLoopFuture<HTTPVersionChoice.Negotiated>
    public let channel: any Channel
}
