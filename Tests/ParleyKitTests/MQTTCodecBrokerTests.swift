import NIOCore
import NIOPosix
import ParleyKit
import ParleyRuntime
import ParleyTestSupport
import Testing

/// The codec against mosquitto itself (the test services' broker, user name and password):
/// both versions connect, subscribe, publish at QoS 1 and get their own message back.
struct MQTTCodecBrokerTests {
    @Test(arguments: MQTTVersion.allCases)
    func mosquittoUnderstandsAndAnswersBothVersions(version: MQTTVersion) async throws {
        let services = try await TestServices.shared()
        let configuration = services.mqtt()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(MQTTPacketDecoder(version: version)),
                        MessageToByteHandler(MQTTPacketEncoder(version: version)))
                    return try NIOAsyncChannel<MQTTPacket, MQTTPacket>(wrappingChannelSynchronously: channel)
                }
            }
        let topic = "parley-kit-test/\(version)/\(configuration.clientID)"
        let received = try await withTimeout(.seconds(10)) {
            try await channel.executeThenClose { inbound, outbound in
                var packets = inbound.makeAsyncIterator()
                try await outbound.write(
                    .connect(
                        .init(
                            version: version, clientID: configuration.clientID, keepAlive: 10,
                            username: configuration.username,
                            password: configuration.password.map { ByteBuffer(string: $0) },
                            properties: version == .v5 ? [.sessionExpiryInterval(0), .receiveMaximum(10)] : [])))
                var answers = [try await packets.next()]
                try await outbound.write(
                    .subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: topic, qos: .atLeastOnce)])))
                answers.append(try await packets.next())
                try await outbound.write(
                    .publish(.init(topic: topic, payload: ByteBuffer(string: "hello"), qos: .atLeastOnce, packetID: 2)))
                // The PUBACK and the publication itself, in either order.
                answers.append(try await packets.next())
                answers.append(try await packets.next())
                try await outbound.write(.pingreq)
                answers.append(try await packets.next())
                try await outbound.write(.disconnect(.init()))
                return answers.compactMap { $0 }
            }
        }
        guard case .connack(let connack) = received.first else {
            Issue.record("no CONNACK first: \(received)")
            return
        }
        #expect(connack.reasonCode == 0)
        #expect(received.contains(.suback(.init(packetID: 1, reasonCodes: [1]))))
        #expect(received.contains(.puback(.init(packetID: 2))))
        #expect(received.last == .pingresp)
        let echoes = received.compactMap { packet -> MQTTPacket.Publish? in
            if case .publish(let publish) = packet { return publish }
            return nil
        }
        #expect(echoes.count == 1)
        #expect(echoes.first?.topic == topic)
        #expect(echoes.first?.payload == ByteBuffer(string: "hello"))
        #expect(echoes.first?.qos == .atLeastOnce)
    }
}
