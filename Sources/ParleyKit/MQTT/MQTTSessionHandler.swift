import NIOCore

/// Why an MQTT exchange did not complete.
public enum MQTTConnectionError: Error, Equatable, Sendable {
    /// The broker answered CONNECT with this return or reason code.
    case refused(UInt8)
    /// The connection closed (or was closed) before the answer came.
    case closed
    /// The broker sent a DISCONNECT with this reason code (MQTT 5).
    case disconnected(UInt8)
    /// The broker answered pings no more within the keep-alive.
    case keepAliveTimeout
    /// Every packet id (1–65,535) is waiting for an answer.
    case noFreePacketID
    /// The broker answered a request with a packet of another kind.
    case unexpectedAnswer
}

/// The client side of one MQTT connection, confined to its channel's event loop: the answers
/// awaited by packet id, the acknowledgements owed for received publications, and keep-alive.
final class MQTTSessionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = MQTTPacket
    typealias OutboundOut = MQTTPacket

    private var context: ChannelHandlerContext?
    private var connack: EventLoopPromise<MQTTPacket.Connack>?
    /// Requests awaiting their PUBACK, PUBCOMP, SUBACK or UNSUBACK.
    private var awaiting: [UInt16: EventLoopPromise<MQTTPacket>] = [:]
    private var lastPacketID: UInt16 = 0
    /// QoS 2 publications received and not yet released (PUBREL): one sent again is not delivered twice.
    private var unreleased: Set<UInt16> = []
    private let deliveries: AsyncStream<MQTTPacket.Publish>.Continuation
    private var keepAlive: TimeAmount?
    private var keepAliveTask: RepeatedTask?
    private var lastSent = NIODeadline.now()
    private var pingSent: NIODeadline?
    private var failure: MQTTConnectionError?

    init(deliveries: AsyncStream<MQTTPacket.Publish>.Continuation) {
        self.deliveries = deliveries
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Sends CONNECT; the promise gets the CONNACK (a refusal fails it).
    func connect(_ connect: MQTTPacket.Connect, promise: EventLoopPromise<MQTTPacket.Connack>) {
        connack = promise
        keepAlive = connect.keepAlive > 0 ? .seconds(Int64(connect.keepAlive)) : nil
        send(.connect(connect))
    }

    /// Sends a request that takes a packet id and completes with the broker's answer to it.
    func request(_ make: (UInt16) -> MQTTPacket, promise: EventLoopPromise<MQTTPacket>) {
        if let failure { return promise.fail(failure) }
        guard let context else { return promise.fail(MQTTConnectionError.closed) }
        guard let id = freePacketID() else { return promise.fail(MQTTConnectionError.noFreePacketID) }
        awaiting[id] = promise
        // A packet that cannot be written (one this version cannot say) gets no answer: its
        // request fails with the write's error instead of waiting for ever.
        let written = context.eventLoop.makePromise(of: Void.self)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenFailure { error in handler.value.awaiting.removeValue(forKey: id)?.fail(error) }
        send(make(id), promise: written)
    }

    /// Sends a packet that awaits no answer (QoS 0 PUBLISH, DISCONNECT).
    func send(_ packet: MQTTPacket, promise: EventLoopPromise<Void>? = nil) {
        guard let context else { return promise?.fail(MQTTConnectionError.closed) ?? () }
        lastSent = .now()
        context.writeAndFlush(wrapOutboundOut(packet), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let packet = unwrapInboundIn(data)
        switch packet {
        case .connack(let answer):
            let promise = connack
            connack = nil
            guard answer.reasonCode == 0 else {
                promise?.fail(MQTTConnectionError.refused(answer.reasonCode))
                return
            }
            for case .serverKeepAlive(let seconds) in answer.properties {
                keepAlive = seconds > 0 ? .seconds(Int64(seconds)) : nil
            }
            startKeepAlive(context: context)
            promise?.succeed(answer)
        case .puback(let ack), .pubcomp(let ack):
            awaiting.removeValue(forKey: ack.packetID)?.succeed(packet)
        case .pubrec(let ack):
            // Our QoS 2 publication: release it; the PUBCOMP completes the request.
            guard ack.reasonCode < 0x80 else {
                awaiting.removeValue(forKey: ack.packetID)?.succeed(packet)
                return
            }
            send(.pubrel(.init(packetID: ack.packetID)))
        case .suback(let answer):
            awaiting.removeValue(forKey: answer.packetID)?.succeed(packet)
        case .unsuback(let answer):
            awaiting.removeValue(forKey: answer.packetID)?.succeed(packet)
        case .publish(let publication):
            // Buffered for the app first, acknowledged after. What the app had not yet processed when
            // its process ended is fetched by history (`after=seq`), as after any reconnect.
            switch (publication.qos, publication.packetID) {
            case (.atLeastOnce, let id?):
                deliveries.yield(publication)
                send(.puback(.init(packetID: id)))
            case (.exactlyOnce, let id?):
                if unreleased.insert(id).inserted { deliveries.yield(publication) }
                send(.pubrec(.init(packetID: id)))
            default:
                deliveries.yield(publication)
            }
        case .pubrel(let release):
            unreleased.remove(release.packetID)
            send(.pubcomp(.init(packetID: release.packetID)))
        case .pingresp:
            pingSent = nil
        case .disconnect(let disconnect):
            fail(.disconnected(disconnect.reasonCode), context: context)
        case .connect, .subscribe, .unsubscribe, .pingreq, .auth:
            break  // a broker's packets only; AUTH exchanges are not supported
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(failure ?? .closed, context: nil)
        deliveries.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A packet that could not be written failed its own write; the connection is fine.
        // Anything else (bytes that are not MQTT, a TLS or socket error) ends it.
        switch error as? MQTTCodecError {
        case .notInVersion, .outOfRange: return
        default: context.close(promise: nil)
        }
    }

    private func startKeepAlive(context: ChannelHandlerContext) {
        guard let keepAlive else { return }
        // Checked twice per interval: a ping once half of it passed without a packet sent, and
        // the connection given up when a ping stays unanswered for a whole interval.
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let half = TimeAmount.nanoseconds(keepAlive.nanoseconds / 2)
        keepAliveTask = context.eventLoop.scheduleRepeatedTask(initialDelay: half, delay: half) { _ in
            let (handler, context) = loopBound.value
            handler.checkKeepAlive(context: context, interval: keepAlive)
        }
    }

    private func checkKeepAlive(context: ChannelHandlerContext, interval: TimeAmount) {
        let now = NIODeadline.now()
        if let pingSent, now - pingSent >= interval {
            return fail(.keepAliveTimeout, context: context)
        }
        if pingSent == nil, now - lastSent >= .nanoseconds(interval.nanoseconds / 2) {
            pingSent = now
            send(.pingreq)
        }
    }

    private func freePacketID() -> UInt16? {
        guard awaiting.count < Int(UInt16.max) else { return nil }
        repeat { lastPacketID = lastPacketID == .max ? 1 : lastPacketID + 1 } while awaiting[lastPacketID] != nil
        return lastPacketID
    }

    /// Fails every awaited answer and closes the connection (if `context` is given).
    private func fail(_ error: MQTTConnectionError, context: ChannelHandlerContext?) {
        if failure == nil { failure = error }
        keepAliveTask?.cancel()
        keepAliveTask = nil
        connack?.fail(error)
        connack = nil
        let pending = awaiting
        awaiting = [:]
        for promise in pending.values { promise.fail(error) }
        context?.close(promise: nil)
    }
}
