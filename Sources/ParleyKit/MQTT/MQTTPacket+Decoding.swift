import NIOCore

extension MQTTPacket {
    /// Reads one whole packet from the front of `buffer`: nil, with nothing consumed, while the
    /// packet is incomplete. Throws on anything the protocol forbids, and as soon as the fixed
    /// header announces more than `maximumPacketSize` bytes (before they arrive).
    public static func read(
        from buffer: inout ByteBuffer, version: MQTTVersion, maximumPacketSize: Int = 268_435_460
    ) throws -> MQTTPacket? {
        var peek = buffer
        guard let first = peek.readInteger(as: UInt8.self) else { return nil }
        var length = 0
        var complete = false
        for shift in stride(from: 0, through: 21, by: 7) {
            guard let byte = peek.readInteger(as: UInt8.self) else { return nil }
            length |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                complete = true
                break
            }
        }
        guard complete else { throw MQTTCodecError.malformedRemainingLength }
        let headerSize = buffer.readableBytes - peek.readableBytes
        guard headerSize + length <= maximumPacketSize else { throw MQTTCodecError.packetTooLarge(headerSize + length) }
        guard var body = peek.readSlice(length: length) else { return nil }
        buffer.moveReaderIndex(forwardBy: headerSize + length)
        let packet = try parse(type: first >> 4, flags: first & 0x0F, body: &body, version: version)
        guard body.readableBytes == 0 else {
            throw MQTTCodecError.malformed("\(body.readableBytes) bytes after the packet")
        }
        return packet
    }

    private static func parse(type: UInt8, flags: UInt8, body: inout ByteBuffer, version: MQTTVersion) throws
        -> MQTTPacket
    {
        let v5 = version == .v5
        let required: UInt8 = [6, 8, 10].contains(type) ? 0x02 : 0
        guard type == 3 || flags == required else { throw MQTTCodecError.invalidFlags(type: type, flags: flags) }
        func properties(_ place: MQTTPropertyPlace) throws -> MQTTProperties {
            v5 ? try MQTTProperties.read(from: &body, in: place) : []
        }
        func packetID() throws -> UInt16 {
            let id = try body.readMQTTInteger(as: UInt16.self)
            guard id != 0 else { throw MQTTCodecError.malformed("packet id 0") }
            return id
        }
        /// MQTT 5's optional tail of acknowledgements, DISCONNECT and AUTH: no reason code means
        /// success, no property length means none.
        func reasonCodeAndProperties(_ place: MQTTPropertyPlace) throws -> (UInt8, MQTTProperties) {
            guard v5, body.readableBytes > 0 else { return (0, []) }
            let code = try body.readMQTTInteger(as: UInt8.self)
            return (code, body.readableBytes > 0 ? try MQTTProperties.read(from: &body, in: place) : [])
        }
        func acknowledgement(_ place: MQTTPropertyPlace) throws -> Acknowledgement {
            let id = try packetID()
            let (code, list) = try reasonCodeAndProperties(place)
            return Acknowledgement(packetID: id, reasonCode: code, properties: list)
        }

        switch type {
        case 1:
            return .connect(try Connect.read(from: &body))
        case 2:
            let acknowledgeFlags = try body.readMQTTInteger(as: UInt8.self)
            guard acknowledgeFlags & 0xFE == 0 else {
                throw MQTTCodecError.malformed("CONNACK flags \(acknowledgeFlags)")
            }
            let code = try body.readMQTTInteger(as: UInt8.self)
            return .connack(
                Connack(sessionPresent: acknowledgeFlags == 1, reasonCode: code, properties: try properties(.connack)))
        case 3:
            return .publish(try Publish.read(flags: flags, from: &body, version: version))
        case 4: return .puback(try acknowledgement(.puback))
        case 5: return .pubrec(try acknowledgement(.pubrec))
        case 6: return .pubrel(try acknowledgement(.pubrel))
        case 7: return .pubcomp(try acknowledgement(.pubcomp))
        case 8:
            let id = try packetID()
            let list = try properties(.subscribe)
            var subscriptions: [Subscription] = []
            while body.readableBytes > 0 {
                let filter = try body.readMQTTString()
                guard !filter.isEmpty else { throw MQTTCodecError.malformed("an empty topic filter") }
                subscriptions.append(try Subscription(filter: filter, options: try body.readMQTTInteger(), v5: v5))
            }
            guard !subscriptions.isEmpty else { throw MQTTCodecError.malformed("SUBSCRIBE without a subscription") }
            return .subscribe(Subscribe(packetID: id, subscriptions: subscriptions, properties: list))
        case 9:
            let id = try packetID()
            let list = try properties(.suback)
            let codes = Array(body.readableBytesView)
            body.moveReaderIndex(to: body.writerIndex)
            guard !codes.isEmpty else { throw MQTTCodecError.malformed("SUBACK without a return code") }
            if !v5, let code = codes.first(where: { ![0, 1, 2, 0x80].contains($0) }) {
                throw MQTTCodecError.malformed("SUBACK return code \(code)")
            }
            return .suback(Suback(packetID: id, reasonCodes: codes, properties: list))
        case 10:
            let id = try packetID()
            let list = try properties(.unsubscribe)
            var filters: [String] = []
            while body.readableBytes > 0 { filters.append(try body.readMQTTString()) }
            guard !filters.isEmpty else { throw MQTTCodecError.malformed("UNSUBSCRIBE without a topic filter") }
            return .unsubscribe(Unsubscribe(packetID: id, topicFilters: filters, properties: list))
        case 11:
            let id = try packetID()
            let list = try properties(.unsuback)
            // 3.1.1's UNSUBACK is the packet id alone: what follows it is left to fail as extra bytes.
            let codes = v5 ? Array(body.readableBytesView) : []
            body.moveReaderIndex(forwardBy: codes.count)
            if v5 && codes.isEmpty { throw MQTTCodecError.malformed("UNSUBACK without a reason code") }
            return .unsuback(Unsuback(packetID: id, reasonCodes: codes, properties: list))
        case 12: return .pingreq
        case 13: return .pingresp
        case 14:
            let (code, list) = try reasonCodeAndProperties(.disconnect)
            return .disconnect(Disconnect(reasonCode: code, properties: list))
        case 15 where v5:
            let (code, list) = try reasonCodeAndProperties(.auth)
            return .auth(Auth(reasonCode: code, properties: list))
        default:
            throw MQTTCodecError.unknownPacketType(type)
        }
    }
}

extension MQTTPacket.Connect {
    static func read(from body: inout ByteBuffer) throws -> MQTTPacket.Connect {
        guard try body.readMQTTString() == "MQTT" else { throw MQTTCodecError.malformed("protocol name") }
        guard let version = MQTTVersion(rawValue: try body.readMQTTInteger()) else {
            throw MQTTCodecError.malformed("protocol level")
        }
        let v5 = version == .v5
        let flags = try body.readMQTTInteger(as: UInt8.self)
        let hasWill = flags & 0x04 != 0
        let willQoS = MQTTQoS(rawValue: flags >> 3 & 0x03)
        guard flags & 0x01 == 0, let willQoS, hasWill || (willQoS == .atMostOnce && flags & 0x20 == 0) else {
            throw MQTTCodecError.malformed("CONNECT flags \(flags)")
        }
        if !v5 && flags & 0xC0 == 0x40 { throw MQTTCodecError.malformed("a password without a user name") }
        let keepAlive = try body.readMQTTInteger(as: UInt16.self)
        let properties = v5 ? try MQTTProperties.read(from: &body, in: .connect) : []
        var connect = MQTTPacket.Connect(
            version: version, clientID: try body.readMQTTString(), cleanStart: flags & 0x02 != 0,
            keepAlive: keepAlive, properties: properties)
        if hasWill {
            let willProperties = v5 ? try MQTTProperties.read(from: &body, in: .will) : []
            connect.will = MQTTPacket.Will(
                topic: try body.readMQTTString(), payload: try body.readMQTTBinary(), qos: willQoS,
                retain: flags & 0x20 != 0, properties: willProperties)
        }
        if flags & 0x80 != 0 { connect.username = try body.readMQTTString() }
        if flags & 0x40 != 0 { connect.password = try body.readMQTTBinary() }
        return connect
    }
}

extension MQTTPacket.Publish {
    static func read(flags: UInt8, from body: inout ByteBuffer, version: MQTTVersion) throws -> MQTTPacket.Publish {
        guard let qos = MQTTQoS(rawValue: flags >> 1 & 0x03) else {
            throw MQTTCodecError.invalidFlags(type: 3, flags: flags)
        }
        let duplicate = flags & 0x08 != 0
        if qos == .atMostOnce && duplicate { throw MQTTCodecError.invalidFlags(type: 3, flags: flags) }
        let topic = try body.readMQTTString()
        guard version == .v5 || !topic.isEmpty else { throw MQTTCodecError.malformed("an empty topic") }
        guard !topic.contains(where: { $0 == "+" || $0 == "#" }) else {
            throw MQTTCodecError.malformed("a wildcard in a topic name")
        }
        var packetID: UInt16?
        if qos != .atMostOnce {
            packetID = try body.readMQTTInteger(as: UInt16.self)
            guard packetID != 0 else { throw MQTTCodecError.malformed("packet id 0") }
        }
        let properties = version == .v5 ? try MQTTProperties.read(from: &body, in: .publish) : []
        let payload = body.readSlice(length: body.readableBytes) ?? ByteBuffer()
        return MQTTPacket.Publish(
            topic: topic, payload: payload, qos: qos, retain: flags & 0x01 != 0, duplicate: duplicate,
            packetID: packetID, properties: properties)
    }
}

extension MQTTPacket.Subscription {
    init(filter: String, options: UInt8, v5: Bool) throws {
        let reserved: UInt8 = v5 ? 0xC0 : 0xFC
        guard options & reserved == 0, let qos = MQTTQoS(rawValue: options & 0x03), options >> 4 & 0x03 != 3 else {
            throw MQTTCodecError.malformed("subscription options \(options)")
        }
        self.init(
            topicFilter: filter, qos: qos, noLocal: options & 0x04 != 0, retainAsPublished: options & 0x08 != 0,
            retainHandling: options >> 4 & 0x03)
    }
}
