/// Why bytes are not an MQTT packet, or a packet cannot be written.
public enum MQTTCodecError: Error, Equatable, Sendable {
    /// A packet ended before a field it announced (a length past its end).
    case truncated
    /// The remaining length took more than four bytes.
    case malformedRemainingLength
    /// Larger than the connection accepts (`maximumPacketSize`).
    case packetTooLarge(Int)
    /// A fixed-header type that MQTT does not define, or that this version does not have.
    case unknownPacketType(UInt8)
    /// The fixed header's flags are not the ones the packet type requires.
    case invalidFlags(type: UInt8, flags: UInt8)
    /// A string that is not well-formed UTF-8 or holds U+0000.
    case invalidUTF8
    /// Anything else the protocol forbids, said in words.
    case malformed(String)
    /// Encoding: a field this version does not have (MQTT 5's properties or reason codes in 3.1.1).
    case notInVersion(String)
    /// Encoding: a value out of the protocol's range (a string over 65,535 bytes, a packet id of 0).
    case outOfRange(String)
}
