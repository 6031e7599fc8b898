import Foundation
import NIOSSL

/// Where a broker listens and how to reach it: MQTT's own TCP framing, or MQTT in WebSocket
/// binary frames (what browsers use, and what passes proxies that pass HTTPS), either under TLS.
public struct MQTTEndpoint: Sendable {
    public enum Transport: Sendable, Equatable {
        case tcp
        /// An HTTP/1.1 upgrade to WebSocket at `path`, subprotocol `mqtt`.
        case webSocket(path: String)
    }

    public var host: String
    public var port: Int
    public var transport: Transport
    /// nil: no TLS.
    public var tls: TLSConfiguration?
    /// The name the certificate must carry; `host` when nil.
    public var serverHostname: String?

    public init(
        host: String, port: Int, transport: Transport = .tcp, tls: TLSConfiguration? = nil,
        serverHostname: String? = nil
    ) {
        self.host = host
        self.port = port
        self.transport = transport
        self.tls = tls
        self.serverHostname = serverHostname
    }

    /// `mqtt://`, `mqtts://`, `ws://` or `wss://` (the web client's `wss://host:port/mqtt`),
    /// with the scheme's usual port when none is given.
    public init(url text: String, tls: TLSConfiguration = .makeClientConfiguration()) throws {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host,
            let (transport, secure, port) = Self.schemes[scheme]
        else { throw MQTTEndpointError.unsupportedURL(text) }
        let path = url.path.isEmpty ? "/" : url.path
        self.init(
            host: host, port: url.port ?? port, transport: transport == .tcp ? .tcp : .webSocket(path: path),
            tls: secure ? tls : nil)
    }

    private static let schemes: [String: (Transport, Bool, Int)] = [
        "mqtt": (.tcp, false, 1883), "mqtts": (.tcp, true, 8883),
        "ws": (.webSocket(path: "/"), false, 80), "wss": (.webSocket(path: "/"), true, 443),
    ]
}

public enum MQTTEndpointError: Error, Equatable, Sendable {
    /// Not an `mqtt://`, `mqtts://`, `ws://` or `wss://` URL with a host.
    case unsupportedURL(String)
    /// The broker did not upgrade the connection to WebSocket (its HTTP status).
    case webSocketRefused(UInt)
}
