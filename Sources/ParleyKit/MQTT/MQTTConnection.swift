import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Network)
    import NIOTransportServices
#endif

/// One connected MQTT session with a broker (over TCP or WebSocket, either under TLS): requests that complete with the
/// broker's answer, and the publications it delivers.
///
/// ```swift
/// let connection = try await MQTTConnection.connect(
///     to: try MQTTEndpoint(url: "wss://chat.example.com:8884/mqtt"),
///     as: .init(version: .v5, clientID: "parley-7-phone", username: "7", password: ByteBuffer(string: token)))
/// _ = try await connection.subscribe([.init(topicFilter: "messenger/rooms/42", qos: .atLeastOnce)])
/// for await publication in connection.deliveries { … }
/// ```
public final class MQTTConnection: Sendable {
    /// The broker's answer to CONNECT (whether it kept a session, and in MQTT 5 its limits).
    public let connack: MQTTPacket.Connack
    /// Publications the broker delivers, in order; a QoS 1 one is acknowledged once handed on.
    /// Ends when the connection closes.
    public let deliveries: AsyncStream<MQTTPacket.Publish>
    private let channel: any Channel
    private let handler: NIOLoopBound<MQTTSessionHandler>

    private init(
        channel: any Channel, handler: NIOLoopBound<MQTTSessionHandler>, connack: MQTTPacket.Connack,
        deliveries: AsyncStream<MQTTPacket.Publish>
    ) {
        self.channel = channel
        self.handler = handler
        self.connack = connack
        self.deliveries = deliveries
    }

    /// Connects, sends `connect` and waits for the broker's CONNACK; a refusal throws
    /// ``MQTTConnectionError/refused(_:)`` with its code.
    public static func connect(
        to endpoint: MQTTEndpoint, as connect: MQTTPacket.Connect, maximumPacketSize: Int = 1 << 20,
        group: any EventLoopGroup = MQTTConnection.defaultGroup
    ) async throws -> MQTTConnection {
        let tls = try endpoint.tls.map { try NIOSSLContext(configuration: $0) }
        let (deliveries, continuation) = AsyncStream.makeStream(of: MQTTPacket.Publish.self)
        @Sendable func addMQTT(to channel: any Channel) throws {
            try channel.pipeline.syncOperations.addHandlers(
                ByteToMessageHandler(MQTTPacketDecoder(version: connect.version, maximumPacketSize: maximumPacketSize)),
                MessageToByteHandler(MQTTPacketEncoder(version: connect.version)),
                MQTTSessionHandler(deliveries: continuation))
        }
        let eventLoop = group.next()
        // Completes once the MQTT handlers are on the pipeline: at once over TCP, after the
        // upgrade over WebSocket.
        let ready = eventLoop.makePromise(of: Void.self)
        let channel: any Channel
        do {
            channel = try await bootstrap(on: eventLoop)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(
                                    context: tls, serverHostname: endpoint.serverHostname ?? endpoint.host))
                        }
                        switch endpoint.transport {
                        case .tcp:
                            try addMQTT(to: channel)
                            ready.succeed()
                        case .webSocket(let path):
                            try WebSocketTransport.configure(
                                channel, host: endpoint.host, path: path, ready: ready, upgraded: addMQTT)
                        }
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port).get()
        } catch {
            ready.fail(error)
            throw error
        }
        // A promise completes once: after the upgrade this does nothing.
        channel.closeFuture.whenComplete { _ in ready.fail(MQTTConnectionError.closed) }
        do {
            try await ready.futureResult.get()
            typealias Connected = (NIOLoopBound<MQTTSessionHandler>, MQTTPacket.Connack)
            let (handler, connack) = try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<Connected> in
                let handler: MQTTSessionHandler
                do {
                    handler = try channel.pipeline.syncOperations.handler(type: MQTTSessionHandler.self)
                } catch {
                    return channel.eventLoop.makeFailedFuture(MQTTConnectionError.closed)
                }
                let promise = channel.eventLoop.makePromise(of: MQTTPacket.Connack.self)
                handler.connect(connect, promise: promise)
                let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                return promise.futureResult.map { (bound, $0) }
            }.get()
            return MQTTConnection(channel: channel, handler: handler, connack: connack, deliveries: deliveries)
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Network.framework's event loops on Apple's platforms (NIOTransportServices), NIO's own
    /// sockets elsewhere.
    public static var defaultGroup: any EventLoopGroup {
        #if canImport(Network)
            NIOTSEventLoopGroup.singleton
        #else
            MultiThreadedEventLoopGroup.singleton
        #endif
    }

    /// The bootstrap for `eventLoop`'s kind: Network.framework's for a NIOTransportServices
    /// loop, a socket's otherwise.
    static func bootstrap(on eventLoop: any EventLoop) -> any NIOClientTCPBootstrapProtocol {
        #if canImport(Network)
            if let bootstrap = NIOTSConnectionBootstrap(validatingGroup: eventLoop) { return bootstrap }
        #endif
        return ClientBootstrap(group: eventLoop)
    }

    /// Publishes; at QoS 1 and 2 returns once the broker acknowledged it, with its reason code
    /// (MQTT 5; 0 in 3.1.1 and at QoS 0, where it returns once written).
    @discardableResult
    public func publish(_ publication: MQTTPacket.Publish) async throws -> UInt8 {
        if publication.qos == .atMostOnce {
            try await run { handler, promise in handler.send(.publish(publication), promise: promise) }
            return 0
        }
        switch try await request({ id in
            var numbered = publication
            numbered.packetID = id
            return .publish(numbered)
        }) {
        case .puback(let ack), .pubrec(let ack), .pubcomp(let ack): return ack.reasonCode
        default: throw MQTTConnectionError.unexpectedAnswer
        }
    }

    /// Subscribes; returns the broker's code for each subscription, in order (the QoS granted,
    /// or 0x80 and above for a refusal).
    public func subscribe(_ subscriptions: [MQTTPacket.Subscription], properties: MQTTProperties = [])
        async throws -> [UInt8]
    {
        let answer = try await request { id in
            .subscribe(.init(packetID: id, subscriptions: subscriptions, properties: properties))
        }
        guard case .suback(let suback) = answer else { throw MQTTConnectionError.unexpectedAnswer }
        return suback.reasonCodes
    }

    /// Unsubscribes; returns the broker's codes (MQTT 5; empty in 3.1.1).
    public func unsubscribe(_ topicFilters: [String]) async throws -> [UInt8] {
        let answer = try await request { id in .unsubscribe(.init(packetID: id, topicFilters: topicFilters)) }
        guard case .unsuback(let unsuback) = answer else { throw MQTTConnectionError.unexpectedAnswer }
        return unsuback.reasonCodes
    }

    /// Sends DISCONNECT (the will is not published) and closes the connection.
    public func disconnect(_ disconnect: MQTTPacket.Disconnect = .init()) async {
        try? await run { handler, promise in handler.send(.disconnect(disconnect), promise: promise) }
        try? await channel.close()
    }

    /// Completes when the connection has closed, for whatever reason.
    public func closed() async {
        try? await channel.closeFuture.get()
    }

    private func request(_ make: @escaping @Sendable (UInt16) -> MQTTPacket) async throws -> MQTTPacket {
        let handler = self.handler
        return try await channel.eventLoop.flatSubmit {
            let promise = self.channel.eventLoop.makePromise(of: MQTTPacket.self)
            handler.value.request(make, promise: promise)
            return promise.futureResult
        }.get()
    }

    private func run(_ body: @escaping @Sendable (MQTTSessionHandler, EventLoopPromise<Void>) -> Void) async throws {
        let handler = self.handler
        try await channel.eventLoop.flatSubmit {
            let promise = self.channel.eventLoop.makePromise(of: Void.self)
            body(handler.value, promise)
            return promise.futureResult
        }.get()
    }
}
