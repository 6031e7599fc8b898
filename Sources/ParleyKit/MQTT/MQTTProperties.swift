import NIOCore

/// One MQTT 5 property (MQTT 5, section 2.2.2.2).
public enum MQTTProperty: Equatable, Sendable {
    case payloadFormatIndicator(UInt8)
    case messageExpiryInterval(UInt32)
    case contentType(String)
    case responseTopic(String)
    case correlationData(ByteBuffer)
    case subscriptionIdentifier(UInt32)
    case sessionExpiryInterval(UInt32)
    case assignedClientIdentifier(String)
    case serverKeepAlive(UInt16)
    case authenticationMethod(String)
    case authenticationData(ByteBuffer)
    case requestProblemInformation(UInt8)
    case willDelayInterval(UInt32)
    case requestResponseInformation(UInt8)
    case responseInformation(String)
    case serverReference(String)
    case reasonString(String)
    case receiveMaximum(UInt16)
    case topicAliasMaximum(UInt16)
    case topicAlias(UInt16)
    case maximumQoS(UInt8)
    case retainAvailable(UInt8)
    case userProperty(String, String)
    case maximumPacketSize(UInt32)
    case wildcardSubscriptionAvailable(UInt8)
    case subscriptionIdentifierAvailable(UInt8)
    case sharedSubscriptionAvailable(UInt8)

    /// The property's identifier on the wire.
    public var identifier: UInt8 {
        switch self {
        case .payloadFormatIndicator: 0x01
        case .messageExpiryInterval: 0x02
        case .contentType: 0x03
        case .responseTopic: 0x08
        case .correlationData: 0x09
        case .subscriptionIdentifier: 0x0B
        case .sessionExpiryInterval: 0x11
        case .assignedClientIdentifier: 0x12
        case .serverKeepAlive: 0x13
        case .authenticationMethod: 0x15
        case .authenticationData: 0x16
        case .requestProblemInformation: 0x17
        case .willDelayInterval: 0x18
        case .requestResponseInformation: 0x19
        case .responseInformation: 0x1A
        case .serverReference: 0x1C
        case .reasonString: 0x1F
        case .receiveMaximum: 0x21
        case .topicAliasMaximum: 0x22
        case .topicAlias: 0x23
        case .maximumQoS: 0x24
        case .retainAvailable: 0x25
        case .userProperty: 0x26
        case .maximumPacketSize: 0x27
        case .wildcardSubscriptionAvailable: 0x28
        case .subscriptionIdentifierAvailable: 0x29
        case .sharedSubscriptionAvailable: 0x2A
        }
    }
}

/// Where a property may appear: the packets (and the will) MQTT 5's table 2-4 allows it in.
enum MQTTPropertyPlace: Sendable {
    case connect, connack, publish, will, puback, pubrec, pubrel, pubcomp, subscribe, suback, unsubscribe,
        unsuback, disconnect, auth
}

/// A packet's MQTT 5 properties, in the order they were written or read.
public struct MQTTProperties: Equatable, Sendable, ExpressibleByArrayLiteral, RandomAccessCollection {
    public var elements: [MQTTProperty]

    public init(_ elements: [MQTTProperty] = []) { self.elements = elements }
    public init(arrayLiteral elements: MQTTProperty...) { self.elements = elements }

    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> MQTTProperty { elements[position] }
    public mutating func append(_ property: MQTTProperty) { elements.append(property) }

    /// Properties a packet may carry more than once; any other twice is a protocol error.
    static let repeatable: Set<UInt8> = [0x26, 0x0B]

    static func allowed(_ identifier: UInt8, in place: MQTTPropertyPlace) -> Bool {
        switch identifier {
        case 0x01, 0x02, 0x03, 0x08, 0x09: [.publish, .will].contains(place)
        case 0x0B: [.publish, .subscribe].contains(place)
        case 0x11: [.connect, .connack, .disconnect].contains(place)
        case 0x12, 0x13, 0x1A, 0x24, 0x25, 0x28, 0x29, 0x2A: place == .connack
        case 0x15, 0x16: [.connect, .connack, .auth].contains(place)
        case 0x17, 0x19: place == .connect
        case 0x18: place == .will
        case 0x1C: [.connack, .disconnect].contains(place)
        case 0x1F: ![.connect, .publish, .will, .subscribe, .unsubscribe].contains(place)
        case 0x21, 0x22, 0x27: [.connect, .connack].contains(place)
        case 0x23: place == .publish
        case 0x26: true
        default: false
        }
    }
}

// MARK: - Wire format

extension MQTTProperties {
    func write(to buffer: inout ByteBuffer) throws {
        var body = ByteBuffer()
        for property in elements { try property.write(to: &body) }
        try buffer.writeMQTTVariableInteger(body.readableBytes)
        buffer.writeImmutableBuffer(body)
    }

    /// Reads a property length and the properties it covers, checking each is known, allowed
    /// in `place`, and not repeated unless repeatable.
    static func read(from buffer: inout ByteBuffer, in place: MQTTPropertyPlace) throws -> MQTTProperties {
        let length = try buffer.readMQTTVariableInteger()
        guard var body = buffer.readSlice(length: length) else { throw MQTTCodecError.truncated }
        var properties = MQTTProperties()
        var seen = Set<UInt8>()
        while body.readableBytes > 0 {
            let identifier = try body.readMQTTVariableInteger()
            guard identifier <= 0x7F, allowed(UInt8(identifier), in: place) else {
                throw MQTTCodecError.malformed("property 0x\(String(identifier, radix: 16)) not allowed here")
            }
            let id = UInt8(identifier)
            guard seen.insert(id).inserted || repeatable.contains(id) else {
                throw MQTTCodecError.malformed("property 0x\(String(id, radix: 16)) repeated")
            }
            properties.append(try MQTTProperty.read(id, from: &body))
        }
        return properties
    }
}

extension MQTTProperty {
    fileprivate func write(to buffer: inout ByteBuffer) throws {
        try buffer.writeMQTTVariableInteger(Int(identifier))
        switch self {
        case .payloadFormatIndicator(let value), .requestProblemInformation(let value),
            .requestResponseInformation(let value), .maximumQoS(let value), .retainAvailable(let value),
            .wildcardSubscriptionAvailable(let value), .subscriptionIdentifierAvailable(let value),
            .sharedSubscriptionAvailable(let value):
            buffer.writeInteger(value)
        case .serverKeepAlive(let value), .receiveMaximum(let value), .topicAliasMaximum(let value),
            .topicAlias(let value):
            buffer.writeInteger(value)
        case .messageExpiryInterval(let value), .sessionExpiryInterval(let value), .willDelayInterval(let value),
            .maximumPacketSize(let value):
            buffer.writeInteger(value)
        case .subscriptionIdentifier(let value):
            try buffer.writeMQTTVariableInteger(Int(value))
        case .contentType(let text), .responseTopic(let text), .assignedClientIdentifier(let text),
            .authenticationMethod(let text), .responseInformation(let text), .serverReference(let text),
            .reasonString(let text):
            try buffer.writeMQTTString(text)
        case .correlationData(let data), .authenticationData(let data):
            try buffer.writeMQTTBinary(data)
        case .userProperty(let name, let value):
            try buffer.writeMQTTString(name)
            try buffer.writeMQTTString(value)
        }
    }

    fileprivate static func read(_ identifier: UInt8, from buffer: inout ByteBuffer) throws -> MQTTProperty {
        func byte() throws -> UInt8 { try buffer.readMQTTInteger() }
        func short() throws -> UInt16 { try buffer.readMQTTInteger() }
        func word() throws -> UInt32 { try buffer.readMQTTInteger() }
        func text() throws -> String { try buffer.readMQTTString() }
        func binary() throws -> ByteBuffer { try buffer.readMQTTBinary() }
        switch identifier {
        case 0x01: return .payloadFormatIndicator(try byte())
        case 0x02: return .messageExpiryInterval(try word())
        case 0x03: return .contentType(try text())
        case 0x08: return .responseTopic(try text())
        case 0x09: return .correlationData(try binary())
        case 0x0B:
            let value = try buffer.readMQTTVariableInteger()
            guard value > 0 else { throw MQTTCodecError.malformed("subscription identifier 0") }
            return .subscriptionIdentifier(UInt32(value))
        case 0x11: return .sessionExpiryInterval(try word())
        case 0x12: return .assignedClientIdentifier(try text())
        case 0x13: return .serverKeepAlive(try short())
        case 0x15: return .authenticationMethod(try text())
        case 0x16: return .authenticationData(try binary())
        case 0x17: return .requestProblemInformation(try byte())
        case 0x18: return .willDelayInterval(try word())
        case 0x19: return .requestResponseInformation(try byte())
        case 0x1A: return .responseInformation(try text())
        case 0x1C: return .serverReference(try text())
        case 0x1F: return .reasonString(try text())
        case 0x21: return .receiveMaximum(try short())
        case 0x22: return .topicAliasMaximum(try short())
        case 0x23: return .topicAlias(try short())
        case 0x24: return .maximumQoS(try byte())
        case 0x25: return .retainAvailable(try byte())
        case 0x26: return .userProperty(try text(), try text())
        case 0x27: return .maximumPacketSize(try word())
        case 0x28: return .wildcardSubscriptionAvailable(try byte())
        case 0x29: return .subscriptionIdentifierAvailable(try byte())
        case 0x2A: return .sharedSubscriptionAvailable(try byte())
        default: throw MQTTCodecError.malformed("unknown property 0x\(String(identifier, radix: 16))")
        }
    }
}
