import NIOCore

/// MQTT's data representations (section 1.5 of both versions) on NIO's `ByteBuffer`.
extension ByteBuffer {
    /// The largest value of a variable byte integer (four bytes of seven bits).
    static let mqttVariableIntegerLimit = 268_435_455

    mutating func writeMQTTVariableInteger(_ value: Int) throws {
        guard (0...Self.mqttVariableIntegerLimit).contains(value) else {
            throw MQTTCodecError.outOfRange("variable byte integer \(value)")
        }
        var rest = value
        repeat {
            var byte = UInt8(rest & 0x7F)
            rest >>= 7
            if rest > 0 { byte |= 0x80 }
            writeInteger(byte)
        } while rest > 0
    }

    mutating func readMQTTVariableInteger() throws -> Int {
        var value = 0
        for shift in stride(from: 0, through: 21, by: 7) {
            guard let byte = readInteger(as: UInt8.self) else { throw MQTTCodecError.truncated }
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        throw MQTTCodecError.malformedRemainingLength
    }

    mutating func readMQTTInteger<Integer: FixedWidthInteger>(as type: Integer.Type = Integer.self) throws -> Integer {
        guard let value = readInteger(as: Integer.self) else { throw MQTTCodecError.truncated }
        return value
    }

    mutating func writeMQTTString(_ text: String) throws {
        let count = text.utf8.count
        guard count <= Int(UInt16.max) else { throw MQTTCodecError.outOfRange("string of \(count) bytes") }
        guard !text.utf8.contains(0) else { throw MQTTCodecError.invalidUTF8 }
        writeInteger(UInt16(count))
        writeString(text)
    }

    mutating func readMQTTString() throws -> String {
        let length = Int(try readMQTTInteger(as: UInt16.self))
        guard let bytes = readSlice(length: length) else { throw MQTTCodecError.truncated }
        guard let text = String(validating: bytes.readableBytesView, as: UTF8.self), !text.utf8.contains(0) else {
            throw MQTTCodecError.invalidUTF8
        }
        return text
    }

    mutating func writeMQTTBinary(_ data: ByteBuffer) throws {
        guard data.readableBytes <= Int(UInt16.max) else {
            throw MQTTCodecError.outOfRange("binary data of \(data.readableBytes) bytes")
        }
        writeInteger(UInt16(data.readableBytes))
        writeImmutableBuffer(data)
    }

    mutating func readMQTTBinary() throws -> ByteBuffer {
        let length = Int(try readMQTTInteger(as: UInt16.self))
        guard let data = readSlice(length: length) else { throw MQTTCodecError.truncated }
        return data
    }
}
