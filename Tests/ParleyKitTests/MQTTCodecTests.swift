import NIOCore
import NIOEmbedded
import Testing

@testable import ParleyKit

struct MQTTCodecTests {
    @Test(arguments: MQTTVersion.allCases)
    func everyPacketTypeComesBackAsWritten(version: MQTTVersion) throws {
        for packet in MQTTSamples.valid(in: version) {
            var buffer = try MQTTSamples.encoded(packet, version)
            let read = try MQTTPacket.read(from: &buffer, version: version)
            #expect(read == packet)
            #expect(buffer.readableBytes == 0, "\(packet) left bytes behind")
        }
    }

    /// Bytes other MQTT implementations write (the specification's examples, mosquitto and
    /// paho on the wire), so the codec is not only consistent with itself.
    @Test func knownEncodingsOfBothVersions() throws {
        let vectors: [(MQTTVersion, MQTTPacket, [UInt8])] = [
            (.v3_1_1, .pingreq, [0xC0, 0x00]),
            (.v3_1_1, .pingresp, [0xD0, 0x00]),
            (.v3_1_1, .disconnect(.init()), [0xE0, 0x00]),
            (.v3_1_1, .connack(.init(sessionPresent: true)), [0x20, 0x02, 0x01, 0x00]),
            (.v3_1_1, .puback(.init(packetID: 7)), [0x40, 0x02, 0x00, 0x07]),
            (.v3_1_1, .pubrel(.init(packetID: 258)), [0x62, 0x02, 0x01, 0x02]),
            (
                .v3_1_1,
                .connect(
                    .init(
                        version: .v3_1_1, clientID: "client", keepAlive: 0, username: "1",
                        password: ByteBuffer(string: "tok"))),
                [0x10, 0x1A, 0x00, 0x04] + Array("MQTT".utf8) + [0x04, 0xC2, 0x00, 0x00, 0x00, 0x06]
                    + Array("client".utf8) + [0x00, 0x01] + Array("1".utf8) + [0x00, 0x03] + Array("tok".utf8)
            ),
            (
                .v3_1_1, .subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: "a/b", qos: .atLeastOnce)])),
                [0x82, 0x08, 0x00, 0x01, 0x00, 0x03] + Array("a/b".utf8) + [0x01]
            ),
            (
                .v3_1_1,
                .publish(
                    .init(topic: "a/b", payload: ByteBuffer(string: "hi"), qos: .atLeastOnce, packetID: 10)),
                [0x32, 0x09, 0x00, 0x03] + Array("a/b".utf8) + [0x00, 0x0A] + Array("hi".utf8)
            ),
            (
                .v5,
                .connect(
                    .init(version: .v5, clientID: "id", keepAlive: 60, properties: [.sessionExpiryInterval(3600)])),
                [0x10, 0x14, 0x00, 0x04] + Array("MQTT".utf8)
                    + [0x05, 0x02, 0x00, 0x3C, 0x05, 0x11, 0x00, 0x00, 0x0E, 0x10, 0x00, 0x02] + Array("id".utf8)
            ),
            (.v5, .connack(.init()), [0x20, 0x03, 0x00, 0x00, 0x00]),
            (.v5, .puback(.init(packetID: 1)), [0x40, 0x02, 0x00, 0x01]),
            (.v5, .puback(.init(packetID: 1, reasonCode: 0x10)), [0x40, 0x03, 0x00, 0x01, 0x10]),
            (.v5, .disconnect(.init()), [0xE0, 0x00]),
            (
                .v5, .publish(.init(topic: "t", payload: ByteBuffer(string: "x"))),
                [0x30, 0x05, 0x00, 0x01, 0x74, 0x00, 0x78]
            ),
        ]
        for (version, packet, bytes) in vectors {
            #expect(Array(try MQTTSamples.encoded(packet, version).readableBytesView) == bytes, "\(packet)")
            var buffer = ByteBuffer(bytes: bytes)
            #expect(try MQTTPacket.read(from: &buffer, version: version) == packet)
        }
    }

    @Test func aRemainingLengthTakesOneToFourBytes() throws {
        for (length, encoded) in [
            (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
            (2_097_152, [0x80, 0x80, 0x80, 0x01]), (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
        ] as [(Int, [UInt8])] {
            var buffer = ByteBuffer()
            try buffer.writeMQTTVariableInteger(length)
            #expect(Array(buffer.readableBytesView) == encoded)
            #expect(try buffer.readMQTTVariableInteger() == length)
        }
        var buffer = ByteBuffer()
        #expect(throws: MQTTCodecError.outOfRange("variable byte integer 268435456")) {
            try buffer.writeMQTTVariableInteger(268_435_456)
        }
    }

    /// A 300 KiB publication: a remaining length of three bytes, and a payload read as it is.
    @Test func aLargePublicationSpansAThreeByteLength() throws {
        let payload = ByteBuffer(repeating: 0xAB, count: 300 * 1024)
        let packet = MQTTPacket.publish(.init(topic: "files/1", payload: payload, qos: .atLeastOnce, packetID: 9))
        var buffer = try MQTTSamples.encoded(packet, .v5)
        #expect(buffer.getInteger(at: 3, as: UInt8.self).map { $0 & 0x80 } == 0)
        #expect(try MQTTPacket.read(from: &buffer, version: .v5) == packet)
    }

    /// On a pipeline, bytes arriving one at a time still make whole packets, in order.
    @Test(arguments: MQTTVersion.allCases)
    func thePipelineDecodesAStreamFedByteByByte(version: MQTTVersion) throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(
            ByteToMessageHandler(MQTTPacketDecoder(version: version)),
            MessageToByteHandler(MQTTPacketEncoder(version: version)))
        let packets = MQTTSamples.valid(in: version)
        var stream = ByteBuffer()
        for packet in packets { try packet.write(to: &stream, version: version) }
        while let byte = stream.readSlice(length: 1) { try channel.writeInbound(byte) }
        for packet in packets { #expect(try channel.readInbound(as: MQTTPacket.self) == packet) }
        #expect(try channel.readInbound(as: MQTTPacket.self) == nil)

        try channel.writeOutbound(MQTTPacket.pingreq)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0xC0, 0x00]))
        #expect(try channel.finish().isClean)
    }

    @Test func whatOnlyMQTT5HasCannotBeWrittenAs311() {
        let refused: [(MQTTPacket, String)] = [
            (.puback(.init(packetID: 1, properties: [.reasonString("x")])), "properties"),
            (.puback(.init(packetID: 1, reasonCode: 0x10)), "an acknowledgement's reason code"),
            (.auth(.init()), "AUTH"),
            (.unsuback(.init(packetID: 1, reasonCodes: [0])), "UNSUBACK reason codes"),
            (
                .subscribe(
                    .init(packetID: 1, subscriptions: [.init(topicFilter: "a", qos: .atMostOnce, noLocal: true)])),
                "subscription options"
            ),
            (
                .connect(.init(version: .v3_1_1, clientID: "c", password: ByteBuffer(string: "p"))),
                "a password without a user name"
            ),
        ]
        for (packet, field) in refused {
            #expect(throws: MQTTCodecError.notInVersion(field)) { try MQTTSamples.encoded(packet, .v3_1_1) }
        }
        #expect(throws: MQTTCodecError.outOfRange("packet id 0")) {
            try MQTTSamples.encoded(.puback(.init(packetID: 0)), .v5)
        }
        #expect(throws: MQTTCodecError.outOfRange("no packet id above QoS 0")) {
            try MQTTSamples.encoded(.publish(.init(topic: "t", payload: ByteBuffer(), qos: .atLeastOnce)), .v5)
        }
    }
}
