import NIOCore
import NIOEmbedded
import ParleyTestSupport
import Testing

@testable import ParleyKit

/// What the decoder does with bytes that are not a packet: a clear error, never a crash, and
/// nothing consumed while a packet may still be arriving.
struct MQTTMalformedPacketTests {
    private func read(_ bytes: [UInt8], _ version: MQTTVersion = .v5, maximum: Int = 1 << 20) throws -> MQTTPacket? {
        var buffer = ByteBuffer(bytes: bytes)
        return try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: maximum)
    }

    @Test func errorsSayWhatIsWrong() {
        let utf8 = Array("MQTT".utf8)
        let cases: [(String, [UInt8], MQTTVersion, MQTTCodecError)] = [
            ("a fifth length byte", [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], .v5, .malformedRemainingLength),
            ("type 0", [0x00, 0x00], .v5, .unknownPacketType(0)),
            ("AUTH in 3.1.1", [0xF0, 0x00], .v3_1_1, .unknownPacketType(15)),
            (
                "SUBSCRIBE without its flags", [0x80, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00], .v3_1_1,
                .invalidFlags(type: 8, flags: 0)
            ),
            ("PINGREQ with flags", [0xC1, 0x00], .v5, .invalidFlags(type: 12, flags: 1)),
            (
                "PUBLISH at QoS 3", [0x36, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], .v3_1_1,
                .invalidFlags(type: 3, flags: 6)
            ),
            ("DUP at QoS 0", [0x38, 0x03, 0x00, 0x01, 0x61], .v3_1_1, .invalidFlags(type: 3, flags: 8)),
            ("a topic of invalid UTF-8", [0x30, 0x04, 0x00, 0x02, 0xC3, 0x28], .v3_1_1, .invalidUTF8),
            ("U+0000 in a topic", [0x30, 0x03, 0x00, 0x01, 0x00], .v3_1_1, .invalidUTF8),
            (
                "a wildcard in a topic name", [0x30, 0x03, 0x00, 0x01, 0x2B], .v3_1_1,
                .malformed("a wildcard in a topic name")
            ),
            ("an empty topic in 3.1.1", [0x30, 0x02, 0x00, 0x00], .v3_1_1, .malformed("an empty topic")),
            ("packet id 0", [0x40, 0x02, 0x00, 0x00], .v5, .malformed("packet id 0")),
            ("a string past the packet's end", [0x30, 0x03, 0x00, 0x09, 0x61], .v5, .truncated),
            ("bytes after PINGREQ", [0xC0, 0x01, 0x00], .v5, .malformed("1 bytes after the packet")),
            (
                "a CONNACK flag beyond session present", [0x20, 0x02, 0x02, 0x00], .v3_1_1,
                .malformed("CONNACK flags 2")
            ),
            (
                "SUBSCRIBE with no subscription", [0x82, 0x02, 0x00, 0x01], .v3_1_1,
                .malformed("SUBSCRIBE without a subscription")
            ),
            (
                "a 3.1.1 subscription option above QoS", [0x82, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x04], .v3_1_1,
                .malformed("subscription options 4")
            ),
            (
                "retain handling 3", [0x82, 0x07, 0x00, 0x01, 0x00, 0x00, 0x01, 0x61, 0x30], .v5,
                .malformed("subscription options 48")
            ),
            (
                "a 3.1.1 UNSUBACK with a reason code", [0xB0, 0x03, 0x00, 0x01, 0x00], .v3_1_1,
                .malformed("1 bytes after the packet")
            ),
            (
                "a 3.1.1 SUBACK code MQTT does not define", [0x90, 0x03, 0x00, 0x01, 0x03], .v3_1_1,
                .malformed("SUBACK return code 3")
            ),
            (
                "a property a PUBLISH may not carry",
                [0x30, 0x09, 0x00, 0x01, 0x61, 0x05, 0x11, 0x00, 0x00, 0x00, 0x01],
                .v5, .malformed("property 0x11 not allowed here")
            ),
            (
                "a property twice", [0x30, 0x08, 0x00, 0x01, 0x61, 0x04, 0x01, 0x01, 0x01, 0x01], .v5,
                .malformed("property 0x1 repeated")
            ),
            (
                "an unknown property", [0x30, 0x06, 0x00, 0x01, 0x61, 0x02, 0x7F, 0x00], .v5,
                .malformed("property 0x7f not allowed here")
            ),
            ("a property list past the packet's end", [0x30, 0x05, 0x00, 0x01, 0x61, 0x09, 0x01], .v5, .truncated),
            (
                "subscription identifier 0", [0x30, 0x06, 0x00, 0x01, 0x61, 0x02, 0x0B, 0x00], .v5,
                .malformed("subscription identifier 0")
            ),
            (
                "MQIsdp (3.1)", [0x10, 0x0C, 0x00, 0x06] + Array("MQIsdp".utf8) + [0x03, 0x02, 0x00, 0x00], .v5,
                .malformed("protocol name")
            ),
            (
                "protocol level 6", [0x10, 0x0A, 0x00, 0x04] + utf8 + [0x06, 0x02, 0x00, 0x00], .v5,
                .malformed("protocol level")
            ),
            (
                "CONNECT's reserved flag", [0x10, 0x0A, 0x00, 0x04] + utf8 + [0x04, 0x03, 0x00, 0x00], .v5,
                .malformed("CONNECT flags 3")
            ),
            (
                "a will QoS without a will", [0x10, 0x0A, 0x00, 0x04] + utf8 + [0x04, 0x0A, 0x00, 0x00], .v5,
                .malformed("CONNECT flags 10")
            ),
            (
                "a 3.1.1 password without a user name",
                [0x10, 0x0F, 0x00, 0x04] + utf8 + [0x04, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x70], .v5,
                .malformed("a password without a user name")
            ),
        ]
        for (what, bytes, version, error) in cases {
            #expect(throws: error, "\(what)") { try read(bytes, version) }
        }
    }

    /// The limit holds as soon as the fixed header announces the size, before the bytes come.
    @Test func aPacketOverTheLimitIsRefusedFromItsHeader() throws {
        #expect(throws: MQTTCodecError.packetTooLarge(203)) { try read([0x30, 0xC8, 0x01], maximum: 100) }
        #expect(try read([0x30, 0x62] + [UInt8](repeating: 0, count: 10), maximum: 100) == nil)
    }

    /// Every strict prefix of every packet is "not yet": nothing consumed, no error; at the
    /// end of the stream, a pipeline reports it as truncated.
    @Test(arguments: MQTTVersion.allCases)
    func aTruncatedPacketWaitsAndFailsOnlyAtTheEndOfTheStream(version: MQTTVersion) throws {
        for packet in MQTTSamples.valid(in: version) {
            let whole = Array(try MQTTSamples.encoded(packet, version).readableBytesView)
            for cut in 0..<whole.count {
                var buffer = ByteBuffer(bytes: whole[..<cut])
                #expect(try MQTTPacket.read(from: &buffer, version: version) == nil, "\(packet) cut at \(cut)")
                #expect(buffer.readableBytes == cut)
            }
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(MQTTPacketDecoder(version: version)))
            try channel.writeInbound(ByteBuffer(bytes: whole.dropLast()))
            #expect(throws: MQTTCodecError.truncated) { try channel.finish() }
        }
    }

    /// Fuzzed lengths: each packet with every remaining length from 0 to a few past its own.
    /// A packet read is one the codec writes and reads back the same.
    @Test(arguments: MQTTVersion.allCases)
    func everyRemainingLengthIsAPacketAnErrorOrNotYet(version: MQTTVersion) throws {
        for packet in MQTTSamples.valid(in: version) {
            var whole = try MQTTSamples.encoded(packet, version)
            _ = whole.readInteger(as: UInt8.self)
            let length = try whole.readMQTTVariableInteger()
            let body = Array(whole.readableBytesView)
            let typeAndFlags = try MQTTSamples.encoded(packet, version).getInteger(at: 0, as: UInt8.self)!
            for announced in 0...(length + 3) {
                var buffer = ByteBuffer(integer: typeAndFlags)
                try buffer.writeMQTTVariableInteger(announced)
                buffer.writeBytes(body)
                try expectReadsConsistently(buffer, version)
            }
        }
    }

    /// Random bytes, and valid packets with random bytes changed: never a crash, and whatever is
    /// read survives writing and reading again unchanged. Seeded, so a failure recurs. Seconds
    /// of CPU in a debug build: it yields now and then, so the tests beside it on the task
    /// pool's two threads go on (``SchedulingWatchdogTests`` caught it holding them).
    @Test(arguments: MQTTVersion.allCases)
    func randomAndMutatedBytesNeverCrashTheDecoder(version: MQTTVersion) async throws {
        var random = SeededGenerator(seed: version == .v5 ? 5 : 4)
        for round in 0..<20_000 {
            if round % 500 == 0 { await Task.yield() }
            let count = Int.random(in: 0...48, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            try expectReadsConsistently(ByteBuffer(bytes: bytes), version)
        }
        let packets = MQTTSamples.valid(in: version)
        for round in 0..<20_000 {
            if round % 500 == 0 { await Task.yield() }
            var bytes = Array(
                try MQTTSamples.encoded(packets.randomElement(using: &random)!, version).readableBytesView)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            try expectReadsConsistently(ByteBuffer(bytes: bytes), version)
        }
    }

    private func expectReadsConsistently(_ bytes: ByteBuffer, _ version: MQTTVersion) throws {
        var buffer = bytes
        let packet: MQTTPacket?
        do {
            packet = try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: 1 << 16)
        } catch is MQTTCodecError {
            return
        }
        guard let packet else {
            #expect(buffer.readableBytes == bytes.readableBytes, "not yet, yet bytes were consumed")
            return
        }
        var again = ByteBuffer()
        // CONNECT is written as its own version says, whatever the decoder's.
        try packet.write(to: &again, version: version)
        #expect(try MQTTPacket.read(from: &again, version: version) == packet)
    }
}
