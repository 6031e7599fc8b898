import NIOCore

extension MQTTPacket {
    /// The fixed header's packet type (the high four bits of its first byte).
    var typeCode: UInt8 {
        switch self {
        case .connect: 1
        case .connack: 2
        case .publish: 3
        case .puback: 4
        case .pubrec: 5
        case .pubrel: 6
        case .pubcomp: 7
        case .subscribe: 8
        case .suback: 9
        case .unsubscribe: 10
        case .unsuback: 11
        case .pingreq: 12
        case .pingresp: 13
        case .disconnect: 14
        case .auth: 15
        }
    }

    /// The fixed header's low four bits: fixed by the type, but for PUBLISH's own.
    var flags: UInt8 {
        switch self {
        case .publish(let publish):
            (publish.duplicate ? 0x08 : 0) | publish.qos.rawValue << 1 | (publish.retain ? 0x01 : 0)
        case .pubrel, .subscribe, .unsubscribe: 0x02
        default: 0
        }
    }

    /// Writes the packet as `version` frames it (a CONNECT as its own `version` says).
    public func write(to buffer: inout ByteBuffer, version: MQTTVersion) throws {
        var body = ByteBuffer()
        let v5 = version == .v5
        func properties(_ properties: MQTTProperties) throws {
            if v5 {
                try properties.write(to: &body)
            } else if !properties.isEmpty {
                throw MQTTCodecError.notInVersion("properties")
            }
        }
        func reasonCode(_ code: UInt8, _ field: String) throws {
            if !v5 && code != 0 { throw MQTTCodecError.notInVersion(field) }
        }
        /// Acknowledgements, DISCONNECT and AUTH: MQTT 5 leaves out a success code without properties.
        func reasonCodeAndProperties(_ code: UInt8, _ list: MQTTProperties, _ field: String) throws {
            if v5 {
                guard code != 0 || !list.isEmpty else { return }
                body.writeInteger(code)
                if !list.isEmpty { try list.write(to: &body) }
            } else {
                try reasonCode(code, field)
                try properties(list)
            }
        }
        func packetID(_ id: UInt16) throws {
            guard id != 0 else { throw MQTTCodecError.outOfRange("packet id 0") }
            body.writeInteger(id)
        }

        switch self {
        case .connect(let connect):
            return try connect.write(to: &buffer)
        case .connack(let connack):
            body.writeInteger(UInt8(connack.sessionPresent ? 1 : 0))
            body.writeInteger(connack.reasonCode)
            try properties(connack.properties)
        case .publish(let publish):
            if !v5 && publish.topic.isEmpty { throw MQTTCodecError.outOfRange("an empty topic") }
            try body.writeMQTTString(publish.topic)
            switch (publish.qos, publish.packetID) {
            case (.atMostOnce, nil): break
            case (.atMostOnce, .some): throw MQTTCodecError.outOfRange("a packet id at QoS 0")
            case (_, nil): throw MQTTCodecError.outOfRange("no packet id above QoS 0")
            case (_, .some(let id)): try packetID(id)
            }
            try properties(publish.properties)
            body.writeImmutableBuffer(publish.payload)
        case .puback(let ack), .pubrec(let ack), .pubrel(let ack), .pubcomp(let ack):
            try packetID(ack.packetID)
            try reasonCodeAndProperties(ack.reasonCode, ack.properties, "an acknowledgement's reason code")
        case .subscribe(let subscribe):
            try packetID(subscribe.packetID)
            try properties(subscribe.properties)
            guard !subscribe.subscriptions.isEmpty else { throw MQTTCodecError.outOfRange("no subscription") }
            for subscription in subscribe.subscriptions {
                try body.writeMQTTString(subscription.topicFilter)
                body.writeInteger(try subscription.options(v5: v5))
            }
        case .suback(let suback):
            try packetID(suback.packetID)
            try properties(suback.properties)
            body.writeBytes(suback.reasonCodes)
        case .unsubscribe(let unsubscribe):
            try packetID(unsubscribe.packetID)
            try properties(unsubscribe.properties)
            guard !unsubscribe.topicFilters.isEmpty else { throw MQTTCodecError.outOfRange("no topic filter") }
            for filter in unsubscribe.topicFilters { try body.writeMQTTString(filter) }
        case .unsuback(let unsuback):
            try packetID(unsuback.packetID)
            try properties(unsuback.properties)
            if !v5 && !unsuback.reasonCodes.isEmpty { throw MQTTCodecError.notInVersion("UNSUBACK reason codes") }
            body.writeBytes(unsuback.reasonCodes)
        case .pingreq, .pingresp:
            break
        case .disconnect(let disconnect):
            try reasonCodeAndProperties(disconnect.reasonCode, disconnect.properties, "DISCONNECT's reason code")
        case .auth(let auth):
            guard v5 else { throw MQTTCodecError.notInVersion("AUTH") }
            try reasonCodeAndProperties(auth.reasonCode, auth.properties, "AUTH's reason code")
        }
        buffer.writeInteger(typeCode << 4 | flags)
        try buffer.writeMQTTVariableInteger(body.readableBytes)
        buffer.writeImmutableBuffer(body)
    }
}

extension MQTTPacket.Connect {
    func write(to buffer: inout ByteBuffer) throws {
        let v5 = version == .v5
        if !v5 && !properties.isEmpty { throw MQTTCodecError.notInVersion("properties") }
        if !v5 && password != nil && username == nil {
            throw MQTTCodecError.notInVersion("a password without a user name")
        }
        var flags: UInt8 = cleanStart ? 0x02 : 0
        if let will {
            flags |= 0x04 | will.qos.rawValue << 3 | (will.retain ? 0x20 : 0)
            if !v5 && !will.properties.isEmpty { throw MQTTCodecError.notInVersion("will properties") }
        }
        if password != nil { flags |= 0x40 }
        if username != nil { flags |= 0x80 }

        var body = ByteBuffer()
        try body.writeMQTTString("MQTT")
        body.writeInteger(version.rawValue)
        body.writeInteger(flags)
        body.writeInteger(keepAlive)
        if v5 { try properties.write(to: &body) }
        try body.writeMQTTString(clientID)
        if let will {
            if v5 { try will.properties.write(to: &body) }
            try body.writeMQTTString(will.topic)
            try body.writeMQTTBinary(will.payload)
        }
        if let username { try body.writeMQTTString(username) }
        if let password { try body.writeMQTTBinary(password) }
        buffer.writeInteger(UInt8(0x10))
        try buffer.writeMQTTVariableInteger(body.readableBytes)
        buffer.writeImmutableBuffer(body)
    }
}

extension MQTTPacket.Subscription {
    /// The subscription options byte; 3.1.1 has the QoS bits only.
    func options(v5: Bool) throws -> UInt8 {
        guard retainHandling <= 2 else { throw MQTTCodecError.outOfRange("retain handling \(retainHandling)") }
        let extras = (noLocal ? 0x04 : 0) | (retainAsPublished ? 0x08 : 0) | retainHandling << 4
        if !v5 && extras != 0 { throw MQTTCodecError.notInVersion("subscription options") }
        return qos.rawValue | extras
    }
}
