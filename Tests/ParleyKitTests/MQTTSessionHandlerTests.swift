import NIOCore
import NIOEmbedded
import Testing

@testable import ParleyKit

/// The session's rules on a channel of its own, the broker's packets written in by hand.
struct MQTTSessionHandlerTests {
    private func channel() throws -> (EmbeddedChannel, AsyncStream<MQTTPacket.Publish>) {
        let (deliveries, continuation) = AsyncStream.makeStream(of: MQTTPacket.Publish.self)
        let channel = EmbeddedChannel(handler: MQTTSessionHandler(deliveries: continuation))
        return (channel, deliveries)
    }

    private func publication(_ payload: String, id: UInt16, qos: MQTTQoS, duplicate: Bool = false) -> MQTTPacket {
        .publish(.init(topic: "t", payload: ByteBuffer(string: payload), qos: qos, duplicate: duplicate, packetID: id))
    }

    /// QoS 2 sent again before its release (the broker did not see our PUBREC) is answered again
    /// but delivered once; after the release, the same packet id is a new publication.
    @Test func aQoS2PublicationSentAgainIsDeliveredOnce() async throws {
        let (channel, deliveries) = try channel()
        try channel.writeInbound(publication("first", id: 5, qos: .exactlyOnce))
        try channel.writeInbound(publication("first", id: 5, qos: .exactlyOnce, duplicate: true))
        #expect(try channel.readOutbound(as: MQTTPacket.self) == .pubrec(.init(packetID: 5)))
        #expect(try channel.readOutbound(as: MQTTPacket.self) == .pubrec(.init(packetID: 5)))
        try channel.writeInbound(MQTTPacket.pubrel(.init(packetID: 5)))
        #expect(try channel.readOutbound(as: MQTTPacket.self) == .pubcomp(.init(packetID: 5)))
        try channel.writeInbound(publication("second", id: 5, qos: .exactlyOnce))
        _ = try await channel.close()

        var received: [String] = []
        for await delivered in deliveries { received.append(String(buffer: delivered.payload)) }
        #expect(received == ["first", "second"])
    }

    /// QoS 1 is acknowledged after it is handed on; QoS 0 is not acknowledged at all.
    @Test func qos1IsAcknowledgedAndQoS0IsNot() async throws {
        let (channel, deliveries) = try channel()
        try channel.writeInbound(publication("once", id: 9, qos: .atLeastOnce))
        try channel.writeInbound(MQTTPacket.publish(.init(topic: "t", payload: ByteBuffer(string: "fire"))))
        #expect(try channel.readOutbound(as: MQTTPacket.self) == .puback(.init(packetID: 9)))
        #expect(try channel.readOutbound(as: MQTTPacket.self) == nil)
        _ = try await channel.close()
        var received: [String] = []
        for await delivered in deliveries { received.append(String(buffer: delivered.payload)) }
        #expect(received == ["once", "fire"])
    }

    /// Requests waiting for an answer fail when the connection ends, and say why.
    @Test func awaitedAnswersFailWhenTheConnectionCloses() async throws {
        let (channel, _) = try channel()
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1883))
        let handler = try channel.pipeline.syncOperations.handler(type: MQTTSessionHandler.self)
        let promise = channel.eventLoop.makePromise(of: MQTTPacket.self)
        handler.request(
            { .subscribe(.init(packetID: $0, subscriptions: [.init(topicFilter: "a", qos: .atLeastOnce)])) },
            promise: promise)
        guard case .subscribe(let subscribe) = try channel.readOutbound(as: MQTTPacket.self) else {
            Issue.record("no SUBSCRIBE written")
            return
        }
        #expect(subscribe.packetID == 1)
        try channel.writeInbound(MQTTPacket.disconnect(.init(reasonCode: 0x8E)))
        await #expect(throws: MQTTConnectionError.disconnected(0x8E)) { try await promise.futureResult.get() }
    }

    /// A request this version cannot say (properties in 3.1.1) fails with why, not waits for ever.
    @Test func aRequestThatCannotBeWrittenFailsAtOnce() async throws {
        let (deliveries, continuation) = AsyncStream.makeStream(of: MQTTPacket.Publish.self)
        _ = deliveries
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(
            MessageToByteHandler(MQTTPacketEncoder(version: .v3_1_1)), MQTTSessionHandler(deliveries: continuation))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1883))
        let handler = try channel.pipeline.syncOperations.handler(type: MQTTSessionHandler.self)
        let promise = channel.eventLoop.makePromise(of: MQTTPacket.self)
        handler.request(
            {
                .subscribe(
                    .init(
                        packetID: $0, subscriptions: [.init(topicFilter: "a", qos: .atMostOnce)],
                        properties: [.subscriptionIdentifier(1)]))
            },
            promise: promise)
        await #expect(throws: MQTTCodecError.notInVersion("properties")) { try await promise.futureResult.get() }
        #expect(channel.isActive, "a packet the code could not write does not end the connection")
    }
}
