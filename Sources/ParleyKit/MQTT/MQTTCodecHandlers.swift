import NIOCore

/// Bytes to ``MQTTPacket``s on a NIO pipeline (`ByteToMessageHandler(MQTTPacketDecoder(…))`).
public struct MQTTPacketDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = MQTTPacket

    public var version: MQTTVersion
    /// Packets announcing more are refused before their bytes are buffered.
    public var maximumPacketSize: Int

    public init(version: MQTTVersion, maximumPacketSize: Int = 1 << 20) {
        self.version = version
        self.maximumPacketSize = maximumPacketSize
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> MQTTPacket? {
        try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: maximumPacketSize)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> MQTTPacket? {
        if let packet = try decode(buffer: &buffer) { return packet }
        // The connection ended inside a packet.
        if buffer.readableBytes > 0 { throw MQTTCodecError.truncated }
        return nil
    }
}

/// ``MQTTPacket``s to bytes on a NIO pipeline (`MessageToByteHandler(MQTTPacketEncoder(…))`).
public struct MQTTPacketEncoder: MessageToByteEncoder {
    public typealias OutboundIn = MQTTPacket

    public var version: MQTTVersion

    public init(version: MQTTVersion) { self.version = version }

    public func encode(data: MQTTPacket, out: inout ByteBuffer) throws {
        try data.write(to: &out, version: version)
    }
}
